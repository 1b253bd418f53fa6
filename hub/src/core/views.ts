import type {
  AgentInfo,
  MatrixCell,
  PlanChecks,
  PlanRequest,
  RunDetailState,
  RunListItem,
  SiteSummary,
} from '@driftline/protocol';
import { isPlanStale } from '@driftline/protocol';
import type {
  AgentFacts,
  AgentRow,
  CellHistoryRow,
  PlanRequestRow,
  RunRow,
  SiteRow,
} from '../ports/HubStore.js';
import { siteOffsetUncertainty } from './clockOffset.js';

const iso = (t: number | null | undefined): string | null => (t == null ? null : new Date(t).toISOString());

/** What the API needs beside the rows: the time the answer describes and the configured default. */
export interface ViewContext {
  now: number;
  /** Expected contact interval (s) for sites whose agents declared none. */
  defaultContactIntervalS: number | null;
}

/** The site's expected contact interval: the shortest its agents declared, else the configured one. */
export function expectedContactS(agents: readonly AgentFacts[], ctx: ViewContext): number | null {
  const declared = agents.map((a) => a.contactIntervalS).filter((s): s is number => s !== null);
  return declared.length > 0 ? Math.min(...declared) : ctx.defaultContactIntervalS;
}

/**
 * Unreachable: nothing has arrived for longer than the expected contact interval (the shortest one the
 * site's agents declared, else the hub's default), so a site that calls in weekly is not flagged daily.
 */
export function isUnreachable(
  site: SiteRow | null,
  agents: readonly AgentFacts[],
  ctx: ViewContext,
): boolean {
  const expected = expectedContactS(agents, ctx);
  if (!site || site.lastContactAt === null || expected === null) return false;
  return ctx.now - site.lastContactAt > expected * 1000;
}

/** Stale: the plan (corrected plan time) is older than protocol's threshold (`isPlanStale`, twice the cadence declared). */
export function isStale(cell: { plannedAt: number; expectedIntervalS: number | null }, now: number): boolean {
  return isPlanStale(cell.plannedAt, cell.expectedIntervalS, now);
}

export function toMatrixCell(c: CellHistoryRow, ctx: ViewContext, siteUnreachable: boolean): MatrixCell {
  return {
    site: c.site as MatrixCell['site'],
    environment: c.environment,
    component: c.component,
    status: c.status,
    counts: c.counts,
    plannedAt: iso(c.plannedAt),
    receivedAt: iso(c.receivedAt),
    runId: c.runId as MatrixCell['runId'],
    expectedIntervalS: c.expectedIntervalS,
    stale: isStale(c, ctx.now),
    siteUnreachable,
    reason: c.reason,
    ...(c.ref ? { ref: c.ref } : {}),
    ...(c.commit ? { commit: c.commit } : {}),
    ...(c.needs?.length ? { needs: [...c.needs] } : {}),
    ...(typeof c.checksFailed === 'number' ? { checksFailed: c.checksFailed } : {}),
  };
}

/** Cells an agent declared a cadence for but has not reported yet. */
export function noDataCells(
  agents: readonly AgentRow[],
  have: ReadonlySet<string>,
  siteUnreachable: boolean,
): MatrixCell[] {
  const out: MatrixCell[] = [];
  for (const a of agents) {
    for (const [key, cadence] of Object.entries(a.cadenceS)) {
      const [environment, component] = key.split('/') as [string, string];
      // `@ref` keys are plans of other refs: the main matrix shows only default cells.
      if (!component || key.includes('@') || have.has(`${a.site}/${key}`)) continue;
      out.push({
        site: a.site as MatrixCell['site'],
        environment,
        component,
        status: 'no-data',
        counts: null,
        plannedAt: null,
        receivedAt: null,
        runId: null,
        expectedIntervalS: cadence,
        stale: false,
        siteUnreachable,
        reason: null,
      });
    }
  }
  return out;
}

export function meanOffset(agents: readonly AgentFacts[]): number | null {
  const o = agents.map((a) => a.clockOffsetMs).filter((x): x is number => x !== null);
  return o.length ? Math.round(o.reduce((s, x) => s + x, 0) / o.length) : null;
}

export function toSiteSummary(
  site: SiteRow,
  agents: readonly AgentRow[],
  cells: readonly MatrixCell[],
  ctx: ViewContext,
): SiteSummary {
  const statusCounts: Record<string, number> = {};
  for (const c of cells) statusCounts[c.status] = (statusCounts[c.status] ?? 0) + 1;
  return toSiteSummaryCounted(site, agents, { cells: cells.length, statusCounts }, ctx);
}

/** A site's summary from its cell counts (the read model's, or counted from cells). */
export function toSiteSummaryCounted(
  site: SiteRow,
  agents: readonly AgentFacts[],
  counts: { cells: number; statusCounts: Record<string, number> },
  ctx: ViewContext,
): SiteSummary {
  return {
    site: site.site as SiteSummary['site'],
    lastContactAt: iso(site.lastContactAt),
    expectedContactIntervalS: expectedContactS(agents, ctx),
    unreachable: isUnreachable(site, agents, ctx),
    clockOffsetMs: meanOffset(agents),
    clockOffsetUncertaintyMs: siteOffsetUncertainty(agents, meanOffset(agents)),
    clockHeldAgents: agents.filter((a) => a.clockHeld).map((a) => a.agent),
    cells: counts.cells,
    statusCounts: { ...counts.statusCounts },
  };
}

export function toAgentInfo(a: AgentRow): AgentInfo {
  return {
    agent: a.agent,
    publicKey: a.publicKey,
    enrolledAt: iso(a.enrolledAt) as string,
    revokedAt: iso(a.revokedAt),
    version: a.version,
    lastContactAt: iso(a.lastContactAt),
    queueDepth: a.queueDepth,
    oldestUnsentAt: iso(a.oldestUnsentAt),
    clockOffsetMs: a.clockOffsetMs,
    clockOffsetUncertaintyMs: a.clockOffsetUncertaintyMs ?? null,
    clockHeld: a.clockHeld
      ? {
          ...a.clockHeld,
          since: iso(a.clockHeld.since) as string,
          lastAt: iso(a.clockHeld.lastAt) as string,
        }
      : null,
    ...(a.custodyOverdue?.length
      ? {
          custodyOverdue: a.custodyOverdue.map(({ episode: _e, ...c }) => ({
            ...c,
            oldestAt: iso(c.oldestAt) as string,
            since: iso(c.since) as string,
          })),
        }
      : {}),
    ...(a.hubWindows?.length ? { hubWindows: [...a.hubWindows] } : {}),
  };
}

/** The addresses of a run's failing checks, when any fails (`RunListItem.failingChecks`). */
function failingChecksOf(checks: PlanChecks | undefined): { failingChecks?: string[] } {
  const failing = (checks?.items ?? []).filter((c) => c.status === 'fail').map((c) => c.address);
  return failing.length > 0 ? { failingChecks: failing } : {};
}

export function toRunItem(r: RunRow): RunListItem {
  return {
    runId: r.runId as RunListItem['runId'],
    site: r.site as RunListItem['site'],
    agent: r.agent,
    environment: r.environment,
    component: r.component,
    status: r.status,
    counts: r.counts,
    reason: r.reason,
    plannedAt: iso(r.plannedAt) as string,
    receivedAt: iso(r.receivedAt) as string,
    unchanged: r.unchanged,
    ...(r.summary?.checks ? { checksFailed: r.summary.checks.fail } : {}),
    ...failingChecksOf(r.summary?.checks),
    ...(r.summary?.lock ? { lock: r.summary.lock } : {}),
    ...(r.ref ? { ref: r.ref } : {}),
    ...(r.commit ? { commit: r.commit } : {}),
  };
}

/**
 * Where a run's detail stands (`RunDetail.detailState`): the run names no blob, the blob is not at the hub
 * yet, or it is here and did (or did not) read as a detail within the cap.
 */
export function detailStateOf(
  detailBlob: string | null,
  blob: 'missing' | 'read' | 'unreadable',
): RunDetailState {
  if (!detailBlob) return 'none';
  if (blob === 'missing') return 'pending';
  return blob === 'read' ? 'arrived' : 'unreadable';
}

/**
 * A plan request for the API; with `now`, `unconfirmed` says whether its agent's word that it arrived is
 * overdue (decision 230: past `confirmBy`, still `pending`; it is being sent again).
 */
export function toPlanRequest(r: PlanRequestRow, now?: number): PlanRequest {
  return {
    requestId: r.requestId,
    site: r.site as PlanRequest['site'],
    environment: r.environment,
    component: r.component,
    // A delivered request the agent says it started is running (stored `delivered`, decision 560).
    state: r.state === 'delivered' && r.startedAt != null ? 'running' : r.state,
    requestedAt: iso(r.requestedAt) as string,
    expiresAt: iso(r.expiresAt) as string,
    deliveredAt: iso(r.deliveredAt),
    doneAt: iso(r.doneAt),
    runId: r.runId as PlanRequest['runId'],
    relayAt: iso(r.relayAt),
    relay: r.relay ?? null,
    startedAt: iso(r.startedAt),
    ...(r.ref ? { ref: r.ref } : {}),
    ...(r.commit ? { commit: r.commit } : {}),
    ...(now !== undefined && r.confirmBy != null
      ? { unconfirmed: r.state === 'pending' && now >= r.confirmBy, confirmBy: iso(r.confirmBy) as string }
      : {}),
  };
}
