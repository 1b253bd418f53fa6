import { z } from 'zod';
import { CellContactSchema, SiteContactSchema } from './contactApi.js';
import { RunIdSchema, SiteIdSchema } from './ids.js';
import { PlanCountsSchema, PlanStatusSchema, PlanSummarySchema, StateLockSchema } from './planSummary.js';

/**
 * The hub's dashboard API (`/api/…`). Field names of `MatrixCell` are read by the team's own checks:
 * keep them as they are.
 */

export const CellStatusSchema = z.union([PlanStatusSchema, z.literal('no-data')]);
export type CellStatus = z.infer<typeof CellStatusSchema>;

export const MatrixCellSchema = z.object({
  site: SiteIdSchema,
  environment: z.string(),
  component: z.string(),
  status: CellStatusSchema,
  counts: PlanCountsSchema.nullable(),
  /** When the plan ran at the site (its clock, corrected by the offset estimate), ISO 8601. */
  plannedAt: z.iso.datetime().nullable(),
  /** When the fact reached the hub, ISO 8601. */
  receivedAt: z.iso.datetime().nullable(),
  runId: RunIdSchema.nullable(),
  expectedIntervalS: z.number().nonnegative().nullable(),
  stale: z.boolean(),
  siteUnreachable: z.boolean(),
  reason: z.string().nullable().optional(),
  /** The ref the cell's plan is of (absent or null: a component without a repository). */
  ref: z.string().nullable().optional(),
  /** The commit planned, when known. */
  commit: z.string().nullable().optional(),
  /** For `blocked`: what the site needs. */
  needs: z.array(z.string()).optional(),
  /** Where the cell's site stands against its contact plan, when one judges it (`SiteContact.state`). */
  contact: CellContactSchema.optional(),
  /** The site's next contact window, when `contact` is set. */
  nextWindowAt: z.iso.datetime().nullable().optional(),
  /** For a failure: the first diagnostic's summary (`Error: Unsupported argument`), when the run kept one. */
  diagnostic: z.string().max(200).optional(),
  /**
   * How many of the plan's checks fail (check blocks, pre/postconditions; Terraform's `error` counted as
   * a failure): a signal beside the status (decision 420). Absent: the agent reported no checks.
   */
  checksFailed: z.number().int().nonnegative().optional(),
  /** Every open drift episode of the cell is waived (decision 421): not in attention, shown as waived. */
  driftWaived: z.boolean().optional(),
});
export type MatrixCell = z.infer<typeof MatrixCellSchema>;

export const MatrixResponseSchema = z.object({
  cells: z.array(MatrixCellSchema),
  /** The hub time the matrix describes (now, or `at`). */
  asOf: z.iso.datetime().optional(),
  /** More cells match: pass this as `cursor` for the next page; null or absent: this was the last. */
  next: z.string().nullable().optional(),
});
export type MatrixResponse = z.infer<typeof MatrixResponseSchema>;

export const MatrixQuerySchema = z.object({
  site: z.string().optional(),
  environment: z.string().optional(),
  component: z.string().optional(),
  status: CellStatusSchema.optional(),
  stale: z
    .enum(['true', 'false'])
    .transform((s) => s === 'true')
    .optional(),
  at: z.iso.datetime().optional(),
  /** Plans of this ref (`pr/42`); default the main view (each component's default ref). */
  ref: z.string().max(200).optional(),
  /** A window's rows: only these sites, comma-separated (at most {@link MATRIX_WINDOW_SITES}). */
  sites: z
    .string()
    .max(20_000)
    .transform((s) => s.split(',').filter((x) => x.length > 0))
    .pipe(z.array(z.string()).max(500))
    .optional(),
  /** Most cells in one answer (default and at most {@link MATRIX_PAGE_MAX}). */
  limit: z.coerce.number().int().min(1).max(5000).optional(),
  /** The `next` of the previous page. */
  cursor: z.string().max(2000).optional(),
});
/** Most sites a matrix window names; most cells one matrix answer holds. */
export const MATRIX_WINDOW_SITES = 500;
export const MATRIX_PAGE_MAX = 5000;
export type MatrixQuery = z.infer<typeof MatrixQuerySchema>;

/** A path clock estimate the hub held back, not used to date anything. */
export const ClockHeldSchema = z.object({
  reason: z.enum(['jump', 'contradicts-bounds']),
  /** The claimed agent clock minus hub clock, and its claimed uncertainty, ms. */
  offsetMs: z.number(),
  uncertaintyMs: z.number().nonnegative(),
  since: z.iso.datetime(),
  lastAt: z.iso.datetime(),
  samples: z.number().int().positive(),
  /** The peer the last held estimate came through. */
  via: z.string(),
});
export type ClockHeld = z.infer<typeof ClockHeldSchema>;

/** One agent at a site, as the hub knows it. */
export const AgentInfoSchema = z.object({
  agent: z.string(),
  /** `ed25519:<base64url>` public key pinned at enrolment. */
  publicKey: z.string(),
  enrolledAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().nullable(),
  version: z.string().nullable(),
  lastContactAt: z.iso.datetime().nullable(),
  /**
   * Unacknowledged runs as the agent last reported them (`edge-agent status`' "unacknowledged", then):
   * the runs that report came with are already at the hub; the count falls at the next report after the
   * hub's acknowledgement reaches the agent (decision 580).
   */
  queueDepth: z.number().int().nonnegative().nullable(),
  /** Time of the oldest run the agent had not yet got acknowledged, as last reported. */
  oldestUnsentAt: z.iso.datetime().nullable(),
  /** Estimated agent clock minus hub clock, milliseconds (T2). */
  clockOffsetMs: z.number().nullable(),
  /**
   * The offset is known within ± this many milliseconds (half the round trips of its path, composed per
   * hop); null when it is only a one-way bound (no round-trip estimate yet); absent from older hubs.
   */
  clockOffsetUncertaintyMs: z.number().nonnegative().nullable().optional(),
  /**
   * A clock estimate a path claimed and the hub held back (docs/decisions/230-time-a-hop-cannot-forge.md):
   * it jumped beyond the current offset's uncertainty, or would date a bundle after its arrival or before
   * the agent's previous one. Null or absent: none.
   */
  clockHeld: ClockHeldSchema.nullable().optional(),
  /**
   * Upstreams the agent found sitting on its results (custody past the path's deadline, no hub ack) and
   * passed over: the upstream as the agent names it, the results it held, the oldest receipt's time and
   * when it was first found sitting, and how often what it held went by another way
   * (docs/decisions/575-custody-deadline-per-path.md). Empty or absent: none.
   */
  custodyOverdue: z
    .array(
      z.object({
        upstream: z.string(),
        results: z.number().int().nonnegative(),
        oldestAt: z.iso.datetime(),
        since: z.iso.datetime(),
        resends: z.number().int().nonnegative(),
      }),
    )
    .optional(),
  /**
   * The windows declared for the site at the hub (`contactPlans.sites`) that this agent says it holds and
   * aims at (docs/decisions/590-windows-declared-once.md). Absent: none.
   */
  hubWindows: z.array(z.string()).optional(),
});
export type AgentInfo = z.infer<typeof AgentInfoSchema>;

export const SiteSummarySchema = z.object({
  site: SiteIdSchema,
  lastContactAt: z.iso.datetime().nullable(),
  /** Seconds between contacts the hub expects (declared by the agents or configured). */
  expectedContactIntervalS: z.number().nonnegative().nullable(),
  unreachable: z.boolean(),
  /** Estimated clock offset of the site's agents (mean), milliseconds. */
  clockOffsetMs: z.number().nullable(),
  /** ± milliseconds around `clockOffsetMs` that cover every agent's own estimate; null when one is unknown. */
  clockOffsetUncertaintyMs: z.number().nonnegative().nullable().optional(),
  /** Agents of the site with a clock estimate held back (`AgentInfo.clockHeld`); absent from older hubs. */
  clockHeldAgents: z.array(z.string()).optional(),
  cells: z.number().int().nonnegative(),
  /** Count of cells per status. */
  statusCounts: z.record(z.string(), z.number().int().nonnegative()),
  /**
   * Cells per attention kind (`fleet.ts`' `ATTENTION_KINDS`), counted as the fleet's `attentionCounts`
   * are (waived drift left out, a plan with changes that found drift counted as drift): what the
   * overview's per-site columns show beside "Needs attention". Absent from older hubs.
   */
  attentionCounts: z.record(z.string(), z.number().int().nonnegative()).optional(),
  /** The site's contact plan and where it stands against it; absent from older hubs. */
  contact: SiteContactSchema.optional(),
});
export type SiteSummary = z.infer<typeof SiteSummarySchema>;

export const SitesResponseSchema = z.object({
  sites: z.array(SiteSummarySchema),
  /** How many sites match in all (every page). */
  total: z.number().int().nonnegative().optional(),
  /** Pass as `cursor` for the next page; null or absent: this was the last. */
  next: z.string().nullable().optional(),
});

/** Orders of `GET /api/sites`: by name, by last contact (oldest first, or `-` newest), by problems. */
export const SITE_SORT_KEYS = ['site', '-site', 'lastContact', '-lastContact', 'problems'] as const;
/** Most sites one `/api/sites` answer holds (and the default). */
export const SITES_PAGE_MAX = 500;
export const SITES_PAGE_DEFAULT = 100;
export const SitesQuerySchema = z.object({
  sort: z.enum(SITE_SORT_KEYS).optional(),
  limit: z.coerce.number().int().min(1).max(SITES_PAGE_MAX).optional(),
  cursor: z.string().max(200).optional(),
  /** Only sites whose name contains this text. */
  contains: z.string().max(200).optional(),
});
export type SitesQuery = z.infer<typeof SitesQuerySchema>;
export type SitesResponse = z.infer<typeof SitesResponseSchema>;

export const SiteDetailSchema = SiteSummarySchema.extend({
  agents: z.array(AgentInfoSchema),
  /** The relay (or `direct`) the last bundle from this site came through. */
  upstream: z.string().nullable(),
  /** Expected contact windows, as declared (cron-like text), when known. */
  contactWindows: z.array(z.string()),
  matrix: z.array(MatrixCellSchema),
});
export type SiteDetail = z.infer<typeof SiteDetailSchema>;

/** One run in a cell's history. */
export const RunListItemSchema = z.object({
  runId: RunIdSchema,
  site: SiteIdSchema,
  agent: z.string(),
  environment: z.string(),
  component: z.string(),
  status: PlanStatusSchema,
  counts: PlanCountsSchema.nullable(),
  reason: z.string().nullable(),
  plannedAt: z.iso.datetime(),
  receivedAt: z.iso.datetime(),
  /** true when the run only confirmed the previous plan ("unchanged as of"). */
  unchanged: z.boolean(),
  /** How many of the run's checks fail (decision 420); absent: the run reported no checks. */
  checksFailed: z.number().int().nonnegative().optional(),
  /**
   * The addresses of the run's failing checks (`check.health`), as far as its summary lists them (at most
   * 100, failures first); absent when none fails.
   */
  failingChecks: z.array(z.string()).optional(),
  ref: z.string().nullable().optional(),
  commit: z.string().nullable().optional(),
  /** The state lock a `locked` or `stuck-lock` run met, when its agent said (decision 555). */
  lock: StateLockSchema.optional(),
});
export type RunListItem = z.infer<typeof RunListItemSchema>;

export const RunsResponseSchema = z.object({
  runs: z.array(RunListItemSchema),
  nextBefore: z.string().nullable(),
});
export type RunsResponse = z.infer<typeof RunsResponseSchema>;

/** Where a run's per-resource detail stands at the hub (`RunDetail.detailState`). */
export const RUN_DETAIL_STATES = ['none', 'pending', 'arrived', 'unreadable'] as const;
export type RunDetailState = (typeof RUN_DETAIL_STATES)[number];

export const RunDetailSchema = RunListItemSchema.extend({
  summary: PlanSummarySchema,
  /** true once the redacted detail blob has arrived and verified; resources come from it. */
  detailAvailable: z.boolean(),
  /**
   * Where the per-resource detail stands at the hub: `none` (the run has none: failed, locked,
   * redaction-failed, blocked, or `unchanged`, whose detail is the earlier identical plan's), `pending`
   * (announced, still at the site or on its way: blobs travel after the summary, at lower priority),
   * `arrived`, `unreadable` (at the hub but over its size cap or not a detail). Absent from hubs that
   * predate it: read `detailAvailable`.
   */
  detailState: z.enum(RUN_DETAIL_STATES).optional(),
  /**
   * With `detailState: pending`: where the agent's signed facts say the blob is. `uploadedTo` names the
   * upstream that took it (tus) while the hub has not acknowledged it; null: still at the site. `text`
   * reads `detail: pending at <site> (uploaded to <upstream> at <time>, no receipt yet)`.
   */
  detailPending: z
    .object({
      site: z.string(),
      uploadedTo: z.string().nullable(),
      uploadedAt: z.iso.datetime().nullable(),
      text: z.string(),
    })
    .optional(),
});
export type RunDetail = z.infer<typeof RunDetailSchema>;

/**
 * A plan request's states (docs/decisions/560-plan-request-states.md): `pending` (at the hub, or at a relay:
 * `relayAt`), `delivered` (the agent's word, or for an older agent a pull), `running` (the agent's word
 * that it started the plan), then `done`, `expired` or `refused` (by the agent).
 */
export const PLAN_REQUEST_STATES = ['pending', 'delivered', 'running', 'done', 'expired', 'refused'] as const;
export const PlanRequestStateSchema = z.enum(PLAN_REQUEST_STATES);

export const PlanRequestCreateSchema = z.object({
  site: SiteIdSchema,
  environment: z.string().min(1),
  component: z.string().min(1),
  /** The ref to plan (`pr/42`); default the component's default ref. */
  ref: z.string().max(200).optional(),
  /** Plan this commit of the ref (full id) once the site holds it. */
  commit: z.string().max(64).optional(),
});
export type PlanRequestCreate = z.infer<typeof PlanRequestCreateSchema>;

export const PlanRequestSchema = PlanRequestCreateSchema.extend({
  requestId: z.string(),
  state: PlanRequestStateSchema,
  requestedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  deliveredAt: z.iso.datetime().nullable(),
  doneAt: z.iso.datetime().nullable(),
  /** The run that answered the request, once done. */
  runId: RunIdSchema.nullable(),
  /**
   * When a relay pulled the request from the hub's downlink, and which (the hub's direct peer; the hub
   * knows nothing of the hops after it). Null: no relay has it yet, or the agent pulled it itself.
   */
  relayAt: z.iso.datetime().nullable().optional(),
  relay: z.string().nullable().optional(),
  /** When the agent started the plan that answers it (its signed word, on the hub clock; decision 560). */
  startedAt: z.iso.datetime().nullable().optional(),
  /**
   * For an agent that confirms what it receives (docs/decisions/230-time-a-hop-cannot-forge.md): when its
   * signed document should say the request arrived, and whether that is overdue (still `pending` past it:
   * the hub sends it again). `delivered` is then the agent's word, never a relay's pull. Absent for older
   * agents and hubs.
   */
  confirmBy: z.iso.datetime().optional(),
  unconfirmed: z.boolean().optional(),
});
export type PlanRequest = z.infer<typeof PlanRequestSchema>;

/** `GET /api/plan-requests` answer, newest first. */
export const PlanRequestsResponseSchema = z.object({ requests: z.array(PlanRequestSchema) });
export type PlanRequestsResponse = z.infer<typeof PlanRequestsResponseSchema>;

/** Server-Sent Events on `/api/events`: the event name and its JSON `data`. */
export const HubEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('cell-updated'), cell: MatrixCellSchema }),
  z.object({ type: z.literal('site-updated'), site: SiteSummarySchema }),
  z.object({ type: z.literal('run-added'), run: RunListItemSchema }),
  z.object({ type: z.literal('plan-request-updated'), request: PlanRequestSchema }),
  /**
   * What one ingest batch or sweep moved, coalesced (decision 402): the sites touched, how many cells
   * changed (each also sent as `cell-updated`) and how many were unchanged confirmations (their ages
   * moved; they are not sent one by one), and the fleet's new totals. A client asks for what it shows.
   */
  z.object({
    type: z.literal('fleet-moved'),
    at: z.iso.datetime(),
    /** Sites whose cells or contact moved, sorted; at most {@link FLEET_MOVED_SITES}. */
    sites: z.array(z.string()),
    /** More sites moved than `sites` lists. */
    moreSites: z.boolean(),
    changed: z.number().int().nonnegative(),
    confirmed: z.number().int().nonnegative(),
    totals: z.object({
      cells: z.number().int().nonnegative(),
      statusCounts: z.record(z.string(), z.number().int().nonnegative()),
      stale: z.number().int().nonnegative(),
    }),
  }),
  /**
   * What a sweep judged anew as time passed, with nothing ingested (docs/decisions/585-live-is-live.md):
   * sites whose contact state moved (a window opened or closed, a site went overdue or unreachable; each
   * also sent as `site-updated` just before) and relays whose problems moved (went silent, reported
   * again). Sent when something moved, and at least every `withinS` seconds while nothing does: a client
   * that hears none for longer is behind. A client re-reads what it shows when `sites` or `relays` is not empty.
   */
  z.object({
    type: z.literal('fleet-judged'),
    at: z.iso.datetime(),
    /** Sites whose contact state moved, sorted; at most {@link FLEET_MOVED_SITES}. */
    sites: z.array(z.string()),
    moreSites: z.boolean(),
    /** Relays whose problems moved (by code), sorted. */
    relays: z.array(z.string()),
    /** The next `fleet-judged` comes within this many seconds while the hub sweeps. */
    withinS: z.number().positive(),
  }),
  /**
   * The client cannot be caught up from its `Last-Event-ID` and must re-read everything: the hub restarted
   * (another epoch), the client fell behind the replay window, or the id is not one this hub gave out.
   */
  z.object({ type: z.literal('reset'), reason: z.enum(['restarted', 'behind', 'unknown']) }),
]);
export type HubEvent = z.infer<typeof HubEventSchema>;
/** Most sites one `fleet-moved` event names. */
export const FLEET_MOVED_SITES = 1000;
