import type { PlanStatus, RelayStatus } from '@driftline/protocol';
import type {
  AgentBrief,
  AgentRow,
  ApplyRow,
  ApprovalRow,
  ApproverRow,
  AuditRow,
  BlobRow,
  CellHistoryRow,
  CellRow,
  DocChunk,
  DownlinkRow,
  PeerRow,
  PlanRequestRow,
  RunRow,
  SessionRow,
  SiteRow,
  UserRow,
  WebhookRow,
} from './hubRows.js';

/** The rows are defined in hubRows.ts; everything that stores or reads them imports from here. */
export type * from './hubRows.js';

/**
 * Everything one ingest (or API action) writes, applied in one transaction: either all of it is
 * durable or none of it is (D1). Runs and webhooks are insert-if-absent (D2); the rest upserts.
 */
export interface WriteSet {
  bundles?: { id: string; receivedAt: number }[];
  docChunks?: DocChunk[];
  runs?: RunRow[];
  cells?: CellRow[];
  history?: CellHistoryRow[];
  agents?: AgentRow[];
  sites?: SiteRow[];
  announcements?: { sha256: string; docId: string; runId: string | null }[];
  /**
   * Appended to the downlink; an ack replaces any older ack for the same `docId`, and a row with a
   * `replaceKey` any older row with the same key.
   */
  downlink?: Omit<DownlinkRow, 'seq'>[];
  planRequests?: PlanRequestRow[];
  /** Inserted only when no row with the same id exists. */
  webhooks?: WebhookRow[];
  webhookUpdates?: WebhookRow[];
  blobs?: BlobRow[];
  peers?: PeerRow[];
  /** Sets only `lastUsedAt` of each peer token that exists (a revocation written meanwhile stays). */
  peerUses?: { tokenSha256: string; at: number }[];
  /** Sets only `status` and `statusAt` of each peer token that exists (a relay's latest report). */
  peerStatuses?: { tokenSha256: string; status: RelayStatus; at: number }[];
  /** Upserted by name (a revocation is an upsert with `revokedAt` set). */
  users?: UserRow[];
  sessions?: SessionRow[];
  /** Session ids (`idSha256`) to delete. */
  sessionDeletes?: string[];
  /** Appended; the store assigns each its `id`. */
  audit?: Omit<AuditRow, 'id'>[];
  /** Upserted by name. */
  approvers?: ApproverRow[];
  /** Approver names to remove. */
  approverDeletes?: string[];
  /** Upserted by `approvalId`. */
  approvals?: ApprovalRow[];
  /** Upserted by (site, runId). */
  applies?: ApplyRow[];
}

export interface RetentionPolicy {
  /** Runs kept per cell (newest first); older ones go unless they are failures within `failureMaxAgeMs`. */
  maxRunsPerCell: number;
  maxAgeMs: number;
  /** Failures (`failed`, `locked`, `redaction-failed`) are kept this long regardless of count. */
  failureMaxAgeMs: number;
  /**
   * Plans of a ref other than a component's default (`@ref` cells) whose cell was last updated longer
   * ago than this go, with all their runs. Absent: kept (then only the rules above apply to their runs).
   */
  refMaxAgeMs?: number;
}

/** What one `prune` removed. */
export interface PruneResult {
  runs: number;
  history: number;
  bundles: number;
  /** `@ref` cells removed by `refMaxAgeMs`. */
  refCells: number;
  /** Runs of those cells removed with them (not counted in `runs`). */
  refRuns: number;
}

/** `listRefCells`: which `@ref` cells, at most `limit`. */
export interface RefCellQuery {
  ref?: string;
  site?: string;
  /** Only cells with this status (`blocked` for the needs view). */
  status?: PlanStatus;
  limit: number;
}

/** `listCellsOfRef`: default cells whose latest plan is of `ref` (of one site, when given), at most `limit`. */
export interface CellsOfRefQuery {
  ref: string;
  site?: string;
  /** Cells after this key in key order (a page of the ref's matrix, decision 650). */
  after?: CellKey;
  limit: number;
}

/** Plan statuses that complete a cell's part of a ref gate (`core/RefQueries.ts` `gateState`). */
export const GATE_COMPLETE_STATUSES = ['clean', 'changes', 'drift'] as const;

/** `refGateCounts` / `refGateCells`: the gate of `ref` at `commit` over its default cells. */
export interface RefGateQuery {
  ref: string;
  commit: string;
}

/** `refGateCells`: a window of the gate's default cells, by site, environment, component. */
export interface RefGateCellsQuery extends RefGateQuery {
  /** Every cell of the ref, complete ones too; otherwise only those not complete at the commit. */
  all?: boolean;
  /** Cells after this one in key order (the previous window's last). */
  after?: { site: string; environment: string; component: string };
  limit: number;
}

/**
 * How many default cells of a ref have each status of their plan of the commit: the cell's latest plan
 * when it is of the commit, else its newest run of the ref at the commit; `status` null for none.
 */
export interface RefGateCount {
  status: string | null;
  n: number;
}

/** A default cell of a ref in the gate, and its plan of the commit (the cell itself when its latest is). */
export interface RefGateCell {
  cell: CellRow;
  /** Its newest run of the ref at the commit when the cell has moved on from it; null when none. */
  run: RunRow | null;
}

/** A cell's key. */
export interface CellKey {
  site: string;
  environment: string;
  component: string;
}

/** `refDefaultKeys`: the default cells of `ref`, among `keys` only when given (decision 640). */
export interface RefKeysQuery {
  ref: string;
  keys?: readonly CellKey[];
}

/** One cell of `getCells`: a default cell (`atRef` null or absent) or an `environment/component@ref` cell. */
export interface CellKeyQuery {
  site: string;
  environment: string;
  component: string;
  atRef?: string | null;
}

/**
 * `markSwept`: a sweep's time-driven marks, as the rows read when the sweep decided them. Each is written
 * only while the stored row is still what the sweep saw (a plan request still open, a cell still showing
 * the run `staleNotifiedFor` names, a site whose last contact is still `unreachableNotifiedFor`), so a
 * sweep never puts back an older row an ingest replaced meanwhile.
 */
export interface SweepMarks {
  expired: PlanRequestRow[];
  staleCells: CellRow[];
  sites: SiteRow[];
}

/** `markDelivered`: rows as they read once delivered; what the call wrote of them. */
export interface Deliveries {
  /**
   * Plan requests with `state: 'delivered'`, or still `pending` with `relayAt` (a relay took it, decision
   * 560): written only where the stored one is still `pending` (and, for a relay's mark, has none yet).
   */
  requests: PlanRequestRow[];
  /** Approvals with `deliveredAt` set: written only where the stored one has none yet. */
  approvals: ApprovalRow[];
}

export interface RunQuery {
  site: string;
  environment: string;
  component: string;
  /** Only runs with a RunId lower than this (paging, newest first). */
  before?: string;
  /**
   * Only runs of this ref (the default cell's and the `@ref` cell's alike). Absent: the runs of the
   * default cell (`atRef` null), as before refs existed.
   */
  ref?: string;
  /** Only runs with this status (the cell view's filter). */
  status?: string;
  limit: number;
}

/**
 * A scope the read model counts default cells by (docs/decisions/400-fleet-read-model.md); the fleet's
 * totals are the sum of the `environment` scope. `siteEnvironment` keys are `site/environment`.
 */
export type CountScope = 'site' | 'environment' | 'component' | 'siteEnvironment';

/** One count of the read model: how many cells of `key` have this status, base kind and staleness. */
export interface CellCount {
  key: string;
  status: string;
  /** `baseKind` of the cells ('' for none): the attention kind apart from staleness. */
  kind: string;
  stale: boolean;
  n: number;
}

/** `pageCells`: a window of default cells, in (site, environment, component) order. */
export interface CellPageQuery {
  site?: string;
  /** Only these sites (a window's rows). */
  sites?: readonly string[];
  environment?: string;
  component?: string;
  status?: string;
  /** Only cells with this base kind (`baseKind`). */
  kind?: string;
  stale?: boolean;
  /**
   * With `stale`: judge staleness at this time by the deadline (exact before the sweeper moves the flag);
   * absent: by the stored flag.
   */
  now?: number;
  /** Only cells after this key (the cursor of the previous page). */
  after?: { site: string; environment: string; component: string };
  limit: number;
}

/** `attentionCells`: the longest-standing cells of one attention kind. */
export interface AttentionQuery {
  /**
   * An attention kind as `kindWithStale` gives it: `failed`, `stuck-lock`, `drift`, `blocked` (not stale),
   * or `stale` (stale cells of no worse kind).
   */
  kind: string;
  limit: number;
}

/** Sort orders of `pageSites`. */
export const SITE_SORTS = ['site', '-site', 'lastContact', '-lastContact', 'problems'] as const;
export type SiteSort = (typeof SITE_SORTS)[number];

/** `pageSites`: sites (with a row, or enrolled agents only) in one order, from `offset`. */
export interface SitePageQuery {
  sort: SiteSort;
  offset: number;
  limit: number;
  /** Only sites whose name contains this text. */
  contains?: string;
}

/** Every write goes through `commit`, so each adapter implements atomicity once (D1). */
export interface StoreWrites {
  commit(writes: WriteSet): Promise<void>;
}

/**
 * What the dashboard, the API and the ref gate read: agents, cells (default and `@ref`), runs, sites
 * and plan requests (`test/storeContract.ts`). Reads are small and specific.
 */
/** A ref and how much of the fleet plans it (`ReadStore.refTotals`): its cells, newest plan and result. */
export interface RefTotal {
  ref: string;
  cells: number;
  plannedAt: number;
  receivedAt: number;
}

export interface ReadStore {
  getAgent(site: string, agent: string): Promise<AgentRow | null>;
  listAgents(site?: string): Promise<AgentRow[]>;
  /** Every agent's brief (`core/fleet/agentBrief.ts`), by site and agent: kept at write time, never its cadence. */
  listAgentBriefs(): Promise<AgentBrief[]>;

  getCell(site: string, environment: string, component: string): Promise<CellRow | null>;
  /** Several cells (default or `@ref`) in one read, in the order asked; null where none is stored. */
  getCells(keys: readonly CellKeyQuery[]): Promise<(CellRow | null)[]>;
  listCells(site?: string): Promise<CellRow[]>;
  /**
   * Every ref with plans, over default cells (`ref` set) and `@ref` cells alike: its cells, newest plan
   * and result, newest plan first (then by ref), at most `limit` (`/api/refs`). Kept by the read model
   * (a count per ref, the newest plan and result by index): no cell row is read
   * (docs/decisions/565-ref-and-needs-reads-from-the-read-model.md).
   */
  refTotals(limit: number): Promise<RefTotal[]>;
  /**
   * Default cells whose `ref` is `q.ref` (of `q.site` only, when given), by site, environment, component,
   * at most `q.limit` (the ref gate, the ref's matrix): read by the read model's ref index, never every
   * cell (docs/decisions/565-ref-and-needs-reads-from-the-read-model.md).
   */
  listCellsOfRef(q: CellsOfRefQuery): Promise<CellRow[]>;
  /**
   * The gate's counts over the default cells of `q.ref` (decision 615): per status of each cell's plan
   * of `q.commit` (null: none), each status once, in SQL by the ref index; no cell row is read.
   */
  refGateCounts(q: RefGateQuery): Promise<RefGateCount[]>;
  /**
   * Default cells of `q.ref` (only those whose plan of `q.commit` is not complete, unless `q.all`), by
   * site, environment, component after `q.after`, at most `q.limit`, each with its run of the commit
   * when it has moved on (decision 615).
   */
  refGateCells(q: RefGateCellsQuery): Promise<RefGateCell[]>;
  /**
   * Keys of the default cells whose `ref` is `q.ref` (an `@ref` cell at the key does not matter): of
   * `q.keys` only, when given, each looked up; else every one. Read from the ref index alone, no cell
   * row (docs/decisions/640-ref-reads-whole-and-indexed.md); in no particular order.
   */
  refDefaultKeys(q: RefKeysQuery): Promise<CellKey[]>;
  /** Each agent not revoked that has ref patterns: its site, agent and patterns (the ref gate); nothing else parsed. */
  listAgentRefs(): Promise<Pick<AgentRow, 'site' | 'agent' | 'refs'>[]>;
  /** The read model's counts of one scope (of `keys` only, when given): no cell is read. */
  cellCounts(scope: CountScope, keys?: readonly string[]): Promise<CellCount[]>;
  /** A bounded window of default cells by the read model's columns. */
  pageCells(q: CellPageQuery): Promise<CellRow[]>;
  /** The longest-standing cells (oldest `plannedAt` first) of one attention kind, bounded. */
  attentionCells(q: AttentionQuery): Promise<CellRow[]>;
  /** Sites (names only) in the order asked, and how many match in all. */
  pageSites(q: SitePageQuery): Promise<{ sites: string[]; total: number }>;
  /** The latest history row per cell with `receivedAt <= at`. */
  cellsAt(at: number): Promise<CellHistoryRow[]>;
  /** The `environment/component@ref` cell of a site (a ref other than the component's default). */
  getRefCell(site: string, environment: string, component: string, ref: string): Promise<CellRow | null>;
  /** `@ref` cells by site, environment, component, ref. */
  listRefCells(q: RefCellQuery): Promise<CellRow[]>;

  getRun(runId: string): Promise<RunRow | null>;
  /** Newest first by RunId. */
  listRuns(q: RunQuery): Promise<RunRow[]>;
  /** Runs of `ref` at `commit` over every site and cell, newest first (the ref gate). */
  runsAt(ref: string, commit: string, limit: number): Promise<RunRow[]>;

  getSite(site: string): Promise<SiteRow | null>;
  listSites(): Promise<SiteRow[]>;

  getPlanRequest(requestId: string): Promise<PlanRequestRow | null>;
  /** Newest first; `limit` caps how many (none: all). */
  listPlanRequests(filter?: { site?: string; open?: boolean; limit?: number }): Promise<PlanRequestRow[]>;
}

/**
 * What ingest and the hop side need besides a few reads: bundles seen, document chunks, blobs, the
 * downlink and the per-document merge lock (`test/storeContract.ts`, `test/sharedStoreContract.ts`).
 */
export interface IngestStore
  extends StoreWrites,
    Pick<
      ReadStore,
      | 'getAgent'
      | 'listAgents'
      | 'getCells'
      | 'getCell'
      | 'getRefCell'
      | 'getSite'
      | 'getPlanRequest'
      | 'listPlanRequests'
    >,
    /** An approval the agent's apply record names is delivered by its word (decision 300). */
    Pick<PeopleStore, 'getApproval'> {
  hasBundle(id: string): Promise<boolean>;
  /** A document's stored chunks in order: the first is a whole `save()` once one was stored. */
  docChunks(docId: string): Promise<Uint8Array[]>;

  getBlob(sha256: string): Promise<BlobRow | null>;
  /** Blobs announced for a document that the hub holds. */
  heldBlobsFor(docId: string): Promise<string[]>;
  /** Documents that announced a blob. */
  docsAnnouncing(sha256: string): Promise<string[]>;

  readDownlink(site: string, after: number, limit: number): Promise<DownlinkRow[]>;
  /** Each of `sites`' newest downlink row's `seq`; a site with none is absent (a relay's watch, decision 620). */
  downlinkHeads(sites: readonly string[]): Promise<Map<string, number>>;
  /**
   * A pull handed these out: each plan request goes `pending` → `delivered` (or gains `relayAt`) and each approval gets its
   * `deliveredAt`, atomically and only if no one did it first (another hub serving another relay of the
   * site, or an ingest that answered the request meanwhile). Answers the rows written: the pull that
   * delivered them first.
   */
  markDelivered(d: Deliveries): Promise<Deliveries>;

  /**
   * Runs `fn` while no other hub process on this store merges any of `docIds`: reading a document's
   * chunks, merging and committing happen under it, so one process's compacted document never replaces
   * chunks another just appended. Stores of one process (SQLite, memory) run `fn` at once; PostgreSQL
   * takes a session advisory lock per document.
   */
  lockDocs<T>(docIds: readonly string[], fn: () => Promise<T>): Promise<T>;
}

/**
 * People and peers: users, sessions and the audit log (`test/authStoreContract.ts`), relay tokens
 * (`test/peerStoreContract.ts`), approvers, approvals and applies (`test/approvalStoreContract.ts`).
 */
export interface PeopleStore extends StoreWrites {
  getUser(name: string): Promise<UserRow | null>;
  userByToken(tokenSha256: string): Promise<UserRow | null>;
  /** Every user, revoked ones included, by name. */
  listUsers(): Promise<UserRow[]>;
  getSession(idSha256: string): Promise<SessionRow | null>;
  /** Newest first; `before` pages by `id` (entries with a lower id only). */
  listAudit(q: { limit: number; before?: number }): Promise<AuditRow[]>;

  peerByToken(tokenSha256: string): Promise<PeerRow | null>;
  /** Every peer token, revoked ones included, by name then `createdAt`. */
  listPeers(): Promise<PeerRow[]>;

  /** Approvers by name. */
  listApprovers(): Promise<ApproverRow[]>;
  getApproval(approvalId: string): Promise<ApprovalRow | null>;
  /** Approvals of one site (and run), oldest first, at most `limit`. */
  listApprovals(q: { site: string; runId?: string; limit: number }): Promise<ApprovalRow[]>;
  /**
   * Approvals not yet delivered that ask their agent to confirm them (`confirmBy` set), of every site, by
   * site and id, at most `limit`: what the sweep sends again, read through a partial index (never every
   * site's approvals; docs/decisions/605-one-read-of-unconfirmed-approvals.md).
   */
  listUnconfirmedApprovals(limit: number): Promise<ApprovalRow[]>;
  /** The agent's apply records of a site (for `runIds` only, when given). */
  listApplies(site: string, runIds?: readonly string[]): Promise<ApplyRow[]>;
}

/** What the sweeper writes on time alone: retention, time-driven marks and due webhooks. */
export interface RetentionStore
  extends StoreWrites,
    Pick<ReadStore, 'listAgents' | 'listAgentBriefs' | 'listSites' | 'listPlanRequests'> {
  /**
   * Writes the marks still true (see `SweepMarks`) and, in the same transaction, the webhooks
   * `webhooksOf` names for what was written; answers what was written. Only the mark fields change
   * (`state`, `staleNotifiedFor`, `unreachableNotifiedFor`): the rest of each row stays as stored.
   */
  markSwept(m: SweepMarks, webhooksOf: (written: SweepMarks) => WebhookRow[]): Promise<SweepMarks>;

  /**
   * Marks stale the cells whose deadline (protocol's `staleAt`) passed by `now`, at most `limit`, oldest
   * deadline first, moving the read model's counts in the same transaction; answers the cells marked.
   * Reads only those cells (an index on the deadline), never the fleet.
   */
  advanceStale(now: number, limit: number): Promise<CellRow[]>;

  dueWebhooks(now: number, limit: number): Promise<WebhookRow[]>;
  getWebhook(id: string): Promise<WebhookRow | null>;

  /**
   * Applies retention; never removes the run a cell currently shows (but an expired `@ref` cell goes
   * with all its runs). Also drops sessions past their expiry and audit entries older than `failureMaxAgeMs`.
   */
  prune(policy: RetentionPolicy, now: number): Promise<PruneResult>;
}

/**
 * The hub's storage (docs/architecture.md#storage, decision 020/100): the four slices above, each
 * consumer typed on the one it uses. A SQLite, a PostgreSQL and a memory adapter implement the whole
 * and pass the same contract suites (`test/storeContract.ts` and the suites it runs).
 */
export interface HubStore extends IngestStore, ReadStore, PeopleStore, RetentionStore {
  close(): Promise<void>;
}
