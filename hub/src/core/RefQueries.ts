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
import {
  type AgentRow,
  type CellRow,
  GATE_COMPLETE_STATUSES,
  type ReadStore,
  type RunRow,
} from '../ports/HubStore.js';
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
/**
 * Most cells one gate answer lists (decision 615): a ref touching at most this many lists every cell;
 * a larger one (a fleet's default ref) lists only its cells not complete, the first ones by site, cell.
 * The counts always cover every cell.
 */
export const MAX_GATE_CELLS = 1_000;
/** Keys of agents' cells one `refDefaultKeys` look-up names (the gate's cells its patterns allow). */
const KEYS_PER_LOOKUP = 10_000;
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
  if ((GATE_COMPLETE_STATUSES as readonly string[]).includes(status)) return 'complete';
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
  agents: readonly (Pick<AgentRow, 'site' | 'refs'> & { revokedAt?: number | null })[],
  ref: string,
): Map<string, [string, string, string]> {
  const out = new Map<string, [string, string, string]>();
  for (const a of agents) {
    if (a.revokedAt !== null && a.revokedAt !== undefined) continue;
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
    agents: Parameters<typeof cellsAllowing>[0],
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
   * agent's patterns allow it and no plan of it exists). The default cells of the ref are counted by
   * the store (decision 615): only those listed are read, every cell while the ref touches at most
   * `MAX_GATE_CELLS`, else only the ones not complete.
   */
  async status(ref: string, commit: string, now = Date.now()): Promise<RefStatusResponse | null> {
    // Agents' patterns only, not every agent's whole row (decision 615).
    const allowed = cellsAllowing(await this.store.listAgentRefs(), ref);
    // `@ref` cells of the ref: few (retention ends them), read whole; one wins over a default cell.
    const atRef = new Map<string, CellRow>();
    for (const c of await this.store.listRefCells({ ref, limit: MAX_REF_CELLS }))
      atRef.set(cellId(c.site, c.environment, c.component), c);
    const counted = await this.store.refGateCounts({ ref, commit });
    const counts = { complete: 0, pending: 0, blocked: 0, failed: 0, total: 0 };
    for (const c of counted) {
      counts[c.status === null ? 'pending' : gateState(c.status)] += c.n;
      counts.total += c.n;
    }
    // Cells the agents' patterns allow with no plan of the ref: pending.
    const unknown = [...allowed].filter(([id]) => !atRef.has(id));
    const found =
      counts.total > 0 && unknown.length > 0 ? await this.defaultsOf(ref, unknown, counts.total) : new Set();
    const unplanned = unknown.filter(([id]) => !found.has(id));
    counts.pending += unplanned.length;
    counts.total += unplanned.length + atRef.size;
    if (counts.total === 0) return null;
    const all = counts.total <= MAX_GATE_CELLS;
    const cells: RefCellStatus[] = [];
    const at = (site: string, environment: string, component: string) => ({ site, environment, component });
    for (const [, [site, environment, component]] of unplanned)
      cells.push(this.cellStatus(at(site, environment, component), null, null, commit));
    // The `@ref` cells' plans of the commit they moved on from: the newest run of it per cell, in one read.
    const ofCommit = new Map<string, RunRow>();
    const moved = [...atRef.values()].some((c) => c.commit !== commit);
    for (const r of moved ? await this.store.runsAt(ref, commit, MAX_COMMIT_RUNS) : []) {
      const id = cellId(r.site, r.environment, r.component);
      if (!ofCommit.has(id)) ofCommit.set(id, r);
    }
    for (const [id, c] of atRef) {
      const plan = c.commit === commit ? c : (ofCommit.get(id) ?? null);
      const status = this.cellStatus(c, c, plan, commit);
      counts[status.state] += 1;
      if (all || status.state !== 'complete') cells.push(status);
    }
    for (const { cell, run } of await this.store.refGateCells({ ref, commit, all, limit: MAX_GATE_CELLS }))
      cells.push(this.cellStatus(cell, cell, cell.commit === commit ? cell : run, commit));
    cells.sort((a, b) =>
      byText(cellId(a.site, a.environment, a.component), cellId(b.site, b.environment, b.component)),
    );
    cells.splice(MAX_GATE_CELLS);
    const onTheWay = this.publications ? new OnTheWay(this.publications, now) : null;
    for (const status of cells) {
      if (status.state !== 'blocked' || !status.receivedAt || !onTheWay) continue;
      const ids = await onTheWay.answering(status.site, status.needs, Date.parse(status.receivedAt));
      if (ids.length === 0) continue;
      Object.assign(status, { state: 'pending', onTheWay: ids });
      counts.blocked -= 1;
      counts.pending += 1;
    }
    const state: RefGateState =
      counts.failed > 0
        ? 'failed'
        : counts.blocked > 0
          ? 'blocked'
          : counts.pending > 0
            ? 'pending'
            : 'complete';
    return { ref, commit, state, counts, cells };
  }

  /**
   * Which of `cells` are default cells of `ref` (the rest of the agents' cells have no plan of it), from
   * the store's ref index, no cell row read (decision 640): the ref's keys when it has no more default
   * cells (`defaults`, its gate total) than are asked about, else the asked keys looked up.
   */
  private async defaultsOf(
    ref: string,
    cells: [string, [string, string, string]][],
    defaults: number,
  ): Promise<Set<string>> {
    const out = new Set<string>();
    const add = (ks: { site: string; environment: string; component: string }[]) => {
      for (const k of ks) out.add(cellId(k.site, k.environment, k.component));
    };
    if (defaults <= cells.length) {
      const asked = new Set(cells.map(([id]) => id));
      add(
        (await this.store.refDefaultKeys({ ref })).filter((k) =>
          asked.has(cellId(k.site, k.environment, k.component)),
        ),
      );
      return out;
    }
    for (let i = 0; i < cells.length; i += KEYS_PER_LOOKUP) {
      const part = cells.slice(i, i + KEYS_PER_LOOKUP);
      add(
        await this.store.refDefaultKeys({
          ref,
          keys: part.map(([, [site, environment, component]]) => ({ site, environment, component })),
        }),
      );
    }
    return out;
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
