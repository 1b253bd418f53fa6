import { z } from 'zod';
import type { MatrixCell, SiteSummary } from './api.js';
import { AttentionGroupsSchema } from './attentionGroups.js';
import { SiteContactSchema } from './contactApi.js';
import { SiteIdSchema } from './ids.js';

/**
 * `GET /api/fleet`: the whole fleet at a glance for the dashboard's landing view, small whatever the
 * fleet's size: counts by status, stale and unreachable per site and per environment, each site's link
 * facts, and the cells that need attention first (failed, stuck lock, drift, stale, blocked).
 */

const StatusCountsSchema = z.record(z.string(), z.number().int().nonnegative());

/**
 * Why a site shows what it shows: `ok`, or why it has no (fresh) data. `waiting` (between contact windows,
 * none missed) and `overdue` (a window passed without contact) come from the site's contact plan.
 */
export const LINK_STATES = ['ok', 'never-heard', 'no-plan-yet', 'link-down', 'waiting', 'overdue'] as const;
export const LinkStateSchema = z.enum(LINK_STATES);
export type LinkState = z.infer<typeof LinkStateSchema>;

export const FleetSiteSchema = z.object({
  site: SiteIdSchema,
  cells: z.number().int().nonnegative(),
  statusCounts: StatusCountsSchema,
  stale: z.number().int().nonnegative(),
  unreachable: z.boolean(),
  lastContactAt: z.iso.datetime().nullable(),
  expectedContactIntervalS: z.number().nonnegative().nullable(),
  /** Environments the site has cells in, sorted. */
  environments: z.array(z.string()),
  /** Agents enrolled (not revoked), and how many of them the hub has heard from. */
  agents: z.number().int().nonnegative(),
  agentsHeardFrom: z.number().int().nonnegative(),
  /** Unacknowledged runs the agents last reported (`AgentInfo.queueDepth`), summed; null when none reported. */
  queueDepth: z.number().int().nonnegative().nullable(),
  /** The oldest run an agent had not got acknowledged, as last reported. */
  oldestUnsentAt: z.iso.datetime().nullable(),
  /** The relay (or `direct`) the site's last bundle came through. */
  upstream: z.string().nullable(),
  /** Contact windows the agents declared (free text, often cron). The relay's own plan is not known here. */
  contactWindows: z.array(z.string()),
  link: LinkStateSchema,
  /** The site's contact plan and where it stands against it; absent from older hubs. */
  contact: SiteContactSchema.optional(),
  /** Cells per attention kind, as `SiteSummary.attentionCounts`; absent from older hubs. */
  attentionCounts: StatusCountsSchema.optional(),
});
export type FleetSite = z.infer<typeof FleetSiteSchema>;

export const FleetEnvironmentSchema = z.object({
  environment: z.string(),
  cells: z.number().int().nonnegative(),
  statusCounts: StatusCountsSchema,
  stale: z.number().int().nonnegative(),
  /** Cells of this environment at unreachable sites. */
  unreachable: z.number().int().nonnegative(),
  /** Sites with cells in this environment, sorted. */
  sites: z.array(z.string()),
});
export type FleetEnvironment = z.infer<typeof FleetEnvironmentSchema>;

/**
 * What needs attention, worst first. `stuck-lock` is a failure whose reason is a lock held too long;
 * `check-failed` a plan whose checks fail (decision 420).
 */
export const ATTENTION_KINDS = ['failed', 'stuck-lock', 'drift', 'check-failed', 'stale', 'blocked'] as const;
export const AttentionKindSchema = z.enum(ATTENTION_KINDS);
export type AttentionKind = z.infer<typeof AttentionKindSchema>;

export const AttentionItemSchema = z.object({
  kind: AttentionKindSchema,
  site: SiteIdSchema,
  environment: z.string(),
  component: z.string(),
  ref: z.string().nullable(),
  status: z.string(),
  reason: z.string().nullable(),
  needs: z.array(z.string()),
  plannedAt: z.iso.datetime().nullable(),
  receivedAt: z.iso.datetime().nullable(),
  siteUnreachable: z.boolean(),
});
export type AttentionItem = z.infer<typeof AttentionItemSchema>;

/** One silent site's attention row: `polar-1: 19 cells, waiting for window in 3 min`. */
export const SilentSiteSchema = z.object({
  site: SiteIdSchema,
  cells: z.number().int().nonnegative(),
  state: z.enum(['waiting', 'overdue', 'unreachable']),
  nextWindowAt: z.iso.datetime().nullable(),
  lastContactAt: z.iso.datetime().nullable(),
  missedWindows: z.number().int().nonnegative(),
});
export type SilentSite = z.infer<typeof SilentSiteSchema>;

export const FleetResponseSchema = z.object({
  asOf: z.iso.datetime(),
  totals: z.object({
    cells: z.number().int().nonnegative(),
    statusCounts: StatusCountsSchema,
    stale: z.number().int().nonnegative(),
    sites: z.number().int().nonnegative(),
    unreachableSites: z.number().int().nonnegative(),
    /** Cells at unreachable sites (their last known state is shown). */
    unreachableCells: z.number().int().nonnegative(),
  }),
  sites: z.array(FleetSiteSchema),
  environments: z.array(FleetEnvironmentSchema),
  /** Every component name, sorted. */
  components: z.array(z.string()),
  /** The worst cells, by kind in `ATTENTION_KINDS` order, longest-standing first; capped. */
  attention: z.array(AttentionItemSchema),
  /** How many cells of each kind there are in all (beyond the cap of `attention`). */
  attentionCounts: z.record(AttentionKindSchema, z.number().int().nonnegative()),
  /**
   * Sites silent as a whole (between windows, overdue, unreachable): one attention row each instead of
   * one per cell; their stale cells are counted in `attentionCounts` but not listed in `attention`.
   */
  silentSites: z.array(SilentSiteSchema).optional(),
  /**
   * "Needs attention" grouped by cause (issue 44, `groupAttention`): silent relays, refused and overdue
   * sites, cells by status and reason; headline counts with relay problems. Absent from older hubs.
   */
  attentionGroups: AttentionGroupsSchema.optional(),
});
export type FleetResponse = z.infer<typeof FleetResponseSchema>;

/**
 * One site's summary with its link facts, as the hub knows them from the agents' reports. Its cell counts
 * are taken from the cells given beside it, so the two always agree.
 */
export type FleetSiteInput = SiteSummary &
  Partial<
    Pick<
      FleetSite,
      'agents' | 'agentsHeardFrom' | 'queueDepth' | 'oldestUnsentAt' | 'upstream' | 'contactWindows'
    >
  >;

/** The attention kind of a cell, or null when it needs none. */
export function attentionKind(c: MatrixCell): AttentionKind | null {
  if (c.reason === 'stuck-lock') return 'stuck-lock';
  if (c.status === 'failed' || c.status === 'redaction-failed') return 'failed';
  const drifted = c.status === 'drift' || (c.status === 'changes' && (c.counts?.drift ?? 0) > 0);
  // Drift a waiver covers is counted apart, never in attention (decision 421).
  if (drifted && !c.driftWaived) return 'drift';
  if ((c.checksFailed ?? 0) > 0) return 'check-failed';
  if (c.stale) return 'stale';
  if (c.status === 'blocked') return 'blocked';
  return null;
}

/** Why a site has (or lacks) data: never heard from, heard from without a plan yet, link down, or ok. */
export function linkState(
  s: Pick<SiteSummary, 'lastContactAt' | 'unreachable' | 'contact'>,
  cellsWithData: number,
): LinkState {
  if (s.lastContactAt === null) return 'never-heard';
  if (s.unreachable) return 'link-down';
  if (s.contact?.judged && s.contact.state === 'overdue') return 'overdue';
  if (cellsWithData === 0) return 'no-plan-yet';
  if (s.contact?.judged && s.contact.state === 'waiting') return 'waiting';
  return 'ok';
}

/** The site's attention row when it is silent as a whole, else null. */
export function silentSite(s: FleetSite): SilentSite | null {
  const judged = s.contact?.judged ? s.contact : null;
  const state = s.unreachable
    ? 'unreachable'
    : judged?.state === 'waiting' || judged?.state === 'overdue'
      ? judged.state
      : null;
  if (!state || s.cells === 0) return null;
  return {
    site: s.site,
    cells: s.cells,
    state,
    nextWindowAt: judged?.nextWindowAt ?? null,
    lastContactAt: s.lastContactAt,
    missedWindows: judged?.missedWindows ?? 0,
  };
}

const bump = (m: Record<string, number>, k: string) => {
  m[k] = (m[k] ?? 0) + 1;
};
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The fleet summary from the matrix (default refs) and the sites, at `asOf`. Pure; the hub answers
 * `GET /api/fleet` with it and the dashboard's test hub does the same. `attentionCap` bounds the list.
 */
export function summariseFleet(
  cells: readonly MatrixCell[],
  sites: readonly FleetSiteInput[],
  asOf: string,
  attentionCap = 200,
): FleetResponse {
  const totals = { cells: 0, statusCounts: {} as Record<string, number>, stale: 0, unreachableCells: 0 };
  const perSite = new Map<
    string,
    {
      cells: number;
      statusCounts: Record<string, number>;
      stale: number;
      envs: Set<string>;
      withData: number;
      kinds: Record<string, number>;
    }
  >();
  const perEnv = new Map<string, FleetEnvironment & { siteSet: Set<string> }>();
  const components = new Set<string>();
  const byKind = new Map<AttentionKind, MatrixCell[]>(ATTENTION_KINDS.map((k) => [k, []]));
  const attentionCounts = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, 0])) as Record<
    AttentionKind,
    number
  >;
  for (const c of cells) {
    totals.cells++;
    bump(totals.statusCounts, c.status);
    if (c.stale) totals.stale++;
    if (c.siteUnreachable) totals.unreachableCells++;
    components.add(c.component);
    let s = perSite.get(c.site);
    if (!s) {
      s = { cells: 0, statusCounts: {}, stale: 0, envs: new Set(), withData: 0, kinds: {} };
      perSite.set(c.site, s);
    }
    s.cells++;
    bump(s.statusCounts, c.status);
    if (c.stale) s.stale++;
    if (c.runId) s.withData++;
    s.envs.add(c.environment);
    let e = perEnv.get(c.environment);
    if (!e) {
      e = {
        environment: c.environment,
        cells: 0,
        statusCounts: {},
        stale: 0,
        unreachable: 0,
        sites: [],
        siteSet: new Set(),
      };
      perEnv.set(c.environment, e);
    }
    e.cells++;
    bump(e.statusCounts, c.status);
    if (c.stale) e.stale++;
    if (c.siteUnreachable) e.unreachable++;
    e.siteSet.add(c.site);
    const kind = attentionKind(c);
    if (kind) {
      attentionCounts[kind]++;
      bump(s.kinds, kind);
      // A silent site's stale cells are its one row in `silentSites`, not one row each.
      if (!(kind === 'stale' && (c.siteUnreachable || c.contact))) byKind.get(kind)?.push(c);
    }
  }
  // Longest-standing first within a kind; only the kinds the cap reaches are sorted.
  const attention: AttentionItem[] = [];
  for (const kind of ATTENTION_KINDS) {
    const room = attentionCap - attention.length;
    if (room <= 0) break;
    const keyed = (byKind.get(kind) ?? []).map(
      (c) => [`${c.plannedAt ?? ''}\u0000${c.site}/${c.environment}/${c.component}`, c] as const,
    );
    keyed.sort((x, y) => byText(x[0], y[0]));
    for (const [, c] of keyed.slice(0, room))
      attention.push({
        kind,
        site: c.site,
        environment: c.environment,
        component: c.component,
        ref: c.ref ?? null,
        status: c.status,
        reason: c.reason ?? null,
        needs: c.needs ?? [],
        plannedAt: c.plannedAt,
        receivedAt: c.receivedAt,
        siteUnreachable: c.siteUnreachable,
      });
  }
  const siteOut: FleetSite[] = [...sites]
    .sort((a, b) => byText(a.site, b.site))
    .map((s) => {
      const p = perSite.get(s.site);
      return {
        site: s.site,
        cells: p?.cells ?? 0,
        statusCounts: p?.statusCounts ?? {},
        stale: p?.stale ?? 0,
        unreachable: s.unreachable,
        lastContactAt: s.lastContactAt,
        expectedContactIntervalS: s.expectedContactIntervalS,
        environments: [...(p?.envs ?? [])].sort(byText),
        agents: s.agents ?? 0,
        agentsHeardFrom: s.agentsHeardFrom ?? 0,
        queueDepth: s.queueDepth ?? null,
        oldestUnsentAt: s.oldestUnsentAt ?? null,
        upstream: s.upstream ?? null,
        contactWindows: s.contactWindows ?? [],
        link: linkState(s, p?.withData ?? 0),
        ...(s.contact ? { contact: s.contact } : {}),
        // Counted by `attentionKind`, as `attentionCounts` is: the per-site columns agree with attention.
        attentionCounts: p?.kinds ?? {},
      };
    });
  return {
    asOf,
    totals: {
      ...totals,
      sites: siteOut.length,
      unreachableSites: siteOut.filter((s) => s.unreachable).length,
    },
    sites: siteOut,
    environments: [...perEnv.values()]
      .sort((a, b) => byText(a.environment, b.environment))
      .map(({ siteSet, ...e }) => ({ ...e, sites: [...siteSet].sort(byText) })),
    components: [...components].sort(byText),
    attention,
    attentionCounts,
    silentSites: siteOut.map(silentSite).filter((x): x is SilentSite => x !== null),
  };
}
