import {
  type MatrixCell,
  type Need,
  type NeedsResponse,
  type RefCellStatus,
  type RefGateState,
  type RefStatusResponse,
  type RefsResponse,
  refMatches,
  type SiteSources,
  type SourcesResponse,
} from '@driftline/protocol';
import type { AgentRow, CellRow, ReadStore, RunRow } from '../ports/HubStore.js';
import { OnTheWay, type PublicationReader } from './onTheWay.js';

/**
 * Most `@ref` cells (and, for `needs`, blocked default cells) one answer reads; past it the answer covers
 * the first ones by site, cell, ref.
 */
export const MAX_REF_CELLS = 20_000;
/**
 * Most default cells of a ref one answer reads: a fleet's default ref is on nearly every cell (200,000 at
 * 1,000 sites × 200), so the cap is above that. Past it the answer covers the first ones by site, cell;
 * the gate counts the rest its agents' patterns allow as pending, the ref's matrix as `no-data`.
 */
export const MAX_REF_DEFAULT_CELLS = 250_000;
/** Most runs of the gate's commit one answer reads (several per cell when a plan was repeated). */
const MAX_COMMIT_RUNS = 50_000;

const iso = (t: number | null | undefined): string | null =>
  t === null || t === undefined ? null : new Date(t).toISOString();
/** Code-unit order: cheap for thousands of cells, and ids are ASCII. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const cellId = (site: string, environment: string, component: string) =>
  `${site}/${environment}/${component}`;

/** A cell's part of a ref gate from its plan's status: clean, changes and drift complete it. */
export function gateState(status: string): RefGateState {
  if (status === 'clean' || status === 'changes' || status === 'drift') return 'complete';
  if (status === 'blocked') return 'blocked';
  // A locked plan is retried by the agent (a stuck lock becomes `failed`): not yet a result.
  if (status === 'locked') return 'pending';
  return 'failed';
}

/** The gate over every touched cell: failed > blocked > pending > complete. */
export function overallState(states: readonly RefGateState[]): RefGateState {
  for (const s of ['failed', 'blocked', 'pending'] as const) if (states.includes(s)) return s;
  return 'complete';
}

/** Cells (`site/environment/component`) whose agents may plan `ref` by their ref patterns. */
export function cellsAllowing(
  agents: readonly AgentRow[],
  ref: string,
): Map<string, [string, string, string]> {
  const out = new Map<string, [string, string, string]>();
  for (const a of agents) {
    if (a.revokedAt !== null) continue;
    for (const [key, patterns] of Object.entries(a.refs ?? {})) {
      const slash = key.indexOf('/');
      if (slash < 1 || key.includes('@') || !patterns.some((p) => refMatches(p, ref))) continue;
      const env = key.slice(0, slash);
      const comp = key.slice(slash + 1);
      out.set(cellId(a.site, env, comp), [a.site, env, comp]);
    }
  }
  return out;
}

/**
 * Read models of plans of refs (the CI gate, the ref's matrix, what sites need, what they hold), built
 * from the store: default cells whose plan is of the ref, and `@ref` cells.
 */
export class RefQueries {
  /**
   * @param publications where the gate looks for publications on their way that answer a blocked
   *   plan's needs (then the cell is pending, not blocked); without it, blocked is blocked.
   */
  constructor(
    private readonly store: ReadStore,
    private readonly publications: PublicationReader | null = null,
  ) {}

  /** Cells whose latest plan is of `ref`: default cells of that ref and `@ref` cells. */
  async cellsOf(ref: string, site?: string): Promise<CellRow[]> {
    // The default cells of the ref by the read model's ref index, never every cell (decision 565).
    const main = await this.store.listCellsOfRef({
      ref,
      ...(site ? { site } : {}),
      limit: MAX_REF_DEFAULT_CELLS,
    });
    const other = await this.store.listRefCells({ ref, ...(site ? { site } : {}), limit: MAX_REF_CELLS });
    return [...main, ...other];
  }

  /** Placeholders of the ref's matrix: cells whose agents may plan it that have no plan of it yet. */
  noData(
    agents: readonly AgentRow[],
    ref: string,
    have: ReadonlySet<string>,
    unreachable: (site: string) => boolean,
  ): MatrixCell[] {
    const out: MatrixCell[] = [];
    for (const [id, [site, environment, component]] of cellsAllowing(agents, ref)) {
      if (have.has(id)) continue;
      out.push({
        site: site as MatrixCell['site'],
        environment,
        component,
        status: 'no-data',
        counts: null,
        plannedAt: null,
        receivedAt: null,
        runId: null,
        expectedIntervalS: null,
        stale: false,
        siteUnreachable: unreachable(site),
        reason: null,
        ref,
      });
    }
    return out;
  }

  /** Refs with plans, newest plan first, at most `limit`. */
  async refs(limit: number): Promise<RefsResponse> {
    // Totalled by the read model: listing the cells parsed the whole fleet per request (200,000 rows at
    // 1,000 × 200; docs/decisions/565-ref-and-needs-reads-from-the-read-model.md).
    const refs = (await this.store.refTotals(limit)).map((r) => ({
      ref: r.ref,
      cells: r.cells,
      lastPlannedAt: iso(r.plannedAt),
      lastReceivedAt: iso(r.receivedAt),
    }));
    return { refs };
  }

  /**
   * Whether every cell `ref` touches has a plan of `commit`; null when no cell touches the ref (no
   * agent's patterns allow it and no plan of it exists).
   */
  async status(ref: string, commit: string, now = Date.now()): Promise<RefStatusResponse | null> {
    const touched = cellsAllowing(await this.store.listAgents(), ref);
    const planned = new Map<string, CellRow>();
    for (const c of await this.cellsOf(ref)) {
      const id = cellId(c.site, c.environment, c.component);
      // A component whose default ref is this one has no `@ref` cell of it; one would win if both existed.
      if (!planned.has(id) || c.atRef) planned.set(id, c);
      touched.set(id, [c.site, c.environment, c.component]);
    }
    if (touched.size === 0) return null;
    // Plans of the commit a cell has since moved on from: the newest run of it per cell, in one read.
    const ofCommit = new Map<string, RunRow>();
    const moved = [...planned.values()].some((c) => c.commit !== commit);
    for (const r of moved ? await this.store.runsAt(ref, commit, MAX_COMMIT_RUNS) : []) {
      const id = cellId(r.site, r.environment, r.component);
      if (!ofCommit.has(id)) ofCommit.set(id, r);
    }
    const cells: RefCellStatus[] = [];
    const onTheWay = this.publications ? new OnTheWay(this.publications, now) : null;
    for (const [id, [site, environment, component]] of [...touched].sort((a, b) => byText(a[0], b[0]))) {
      const cell = planned.get(id) ?? null;
      const plan = cell && cell.commit === commit ? cell : (ofCommit.get(id) ?? null);
      const status = this.cellStatus({ site, environment, component }, cell, plan, commit);
      if (status.state === 'blocked' && plan && onTheWay) {
        const ids = await onTheWay.answering(site, status.needs, plan.receivedAt);
        if (ids.length > 0) Object.assign(status, { state: 'pending', onTheWay: ids });
      }
      cells.push(status);
    }
    const count = (s: RefGateState) => cells.filter((c) => c.state === s).length;
    return {
      ref,
      commit,
      state: overallState(cells.map((c) => c.state)),
      counts: {
        complete: count('complete'),
        pending: count('pending'),
        blocked: count('blocked'),
        failed: count('failed'),
        total: cells.length,
      },
      cells,
    };
  }

  private cellStatus(
    at: { site: string; environment: string; component: string },
    cell: CellRow | null,
    plan: CellRow | RunRow | null,
    commit: string,
  ): RefCellStatus {
    const base = {
      site: at.site as RefCellStatus['site'],
      environment: at.environment,
      component: at.component,
    };
    if (!plan)
      return {
        ...base,
        state: 'pending',
        planStatus: null,
        counts: null,
        commit: cell?.commit ?? null,
        plannedAt: null,
        receivedAt: null,
        runId: null,
        reason: null,
        needs: [],
      };
    const needs =
      'needs' in plan && plan.needs ? plan.needs : 'summary' in plan ? (plan.summary.needs ?? []) : [];
    return {
      ...base,
      state: gateState(plan.status),
      planStatus: plan.status,
      counts: plan.counts,
      commit,
      plannedAt: iso(plan.plannedAt),
      receivedAt: iso(plan.receivedAt),
      runId: plan.runId,
      reason: plan.reason,
      needs: [...needs],
    };
  }

  /** What sites lack to plan, from blocked cells (default and `@ref`), by site and need. */
  async needs(site?: string): Promise<NeedsResponse> {
    // The blocked cells through the read model's status index, never a walk of every cell (decision 565).
    const blocked = [
      ...(await this.store.pageCells({ status: 'blocked', ...(site ? { site } : {}), limit: MAX_REF_CELLS })),
      ...(await this.store.listRefCells({
        status: 'blocked',
        ...(site ? { site } : {}),
        limit: MAX_REF_CELLS,
      })),
    ];
    const by = new Map<string, Need>();
    for (const c of blocked) {
      for (const need of new Set(c.needs ?? [])) {
        const k = `${c.site}\u0000${need}`;
        const n = by.get(k) ?? { site: c.site as Need['site'], need, cells: [], since: null };
        n.cells.push({ environment: c.environment, component: c.component, ref: c.ref ?? c.atRef ?? null });
        const at = iso(c.plannedAt);
        if (at && (!n.since || at < n.since)) n.since = at;
        by.set(k, n);
      }
    }
    const needs = [...by.values()].sort((a, b) => byText(a.site, b.site) || byText(a.need, b.need));
    return { needs };
  }

  /** What each site reported holding (mirror heads, provider builds, platforms), merged over its agents. */
  async sources(sites: readonly string[] | null): Promise<SourcesResponse> {
    const agents = (await this.store.listAgents()).filter(
      (a) => a.revokedAt === null && (!sites || sites.includes(a.site)),
    );
    const by = new Map<string, AgentRow[]>();
    for (const a of agents) by.set(a.site, [...(by.get(a.site) ?? []), a]);
    const out: SiteSources[] = [];
    for (const [site, list] of [...by].sort((a, b) => a[0].localeCompare(b[0]))) {
      // The newest report wins where two agents name the same repository and ref.
      const ordered = [...list].sort((a, b) => (a.factsReportedAt ?? 0) - (b.factsReportedAt ?? 0));
      const repos: Record<string, Record<string, string>> = {};
      for (const a of ordered)
        for (const [repo, heads] of Object.entries(a.sources ?? {}))
          repos[repo] = { ...repos[repo], ...heads };
      const reported = ordered.map((a) => a.factsReportedAt ?? null).filter((t): t is number => t !== null);
      out.push({
        site: site as SiteSources['site'],
        repos,
        providers: [...new Set(list.flatMap((a) => a.providers ?? []))].sort(),
        platforms: [...new Set(list.map((a) => a.platform).filter((p): p is string => !!p))].sort(),
        reportedAt: reported.length ? iso(Math.max(...reported)) : null,
      });
    }
    return { sites: out };
  }
}
