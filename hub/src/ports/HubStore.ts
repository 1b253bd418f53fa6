import type { AuditAction, DocRun, PlanCounts, PlanStatus, Role } from '@driftline/protocol';

/** Times in every row are milliseconds since the epoch on the hub's clock unless named otherwise. */

export interface AgentRow {
  site: string;
  agent: string;
  /** `ed25519:<base64url>` pinned at enrolment. */
  publicKey: string;
  enrolledAt: number;
  revokedAt: number | null;
  version: string | null;
  lastContactAt: number | null;
  queueDepth: number | null;
  /** Agent clock, corrected to hub time. */
  oldestUnsentAt: number | null;
  /** Estimated agent clock minus hub clock (T2). */
  clockOffsetMs: number | null;
  /** Half-width of the interval the offset is known in; null: a one-way bound only (or a row from before). */
  clockOffsetUncertaintyMs?: number | null;
  offsetSampledAt: number | null;
  upstream: string | null;
  /** Declared plan interval per cell key `environment/component`, seconds. */
  cadenceS: Record<string, number>;
  contactIntervalS: number | null;
  contactWindows: string[];
  /** Ref patterns each cell key (`environment/component`) may plan; the first is its default ref. */
  refs?: Record<string, string[]>;
  /** Heads of the agent's git mirrors: repository → ref → commit. */
  sources?: Record<string, Record<string, string>>;
  /** Provider builds in the agent's filesystem mirror (`host/ns/type version os_arch`). */
  providers?: string[];
  /** The agent's `os_arch` (`linux_amd64`). */
  platform?: string | null;
  /** When the agent reported these facts, corrected to hub time. */
  factsReportedAt?: number | null;
}

/** The latest fact for one cell of the matrix. */
export interface CellRow {
  site: string;
  environment: string;
  component: string;
  agent: string;
  status: PlanStatus;
  counts: PlanCounts | null;
  reason: string | null;
  runId: string;
  /** When the plan ran at the site, corrected to hub time by the offset estimate. */
  plannedAt: number;
  receivedAt: number;
  expectedIntervalS: number | null;
  planHash: string | null;
  /** The run id for which a `stale` webhook was queued, so each transition notifies once. */
  staleNotifiedFor: string | null;
  /** The ref the plan is of; absent or null for a component without a repository. */
  ref?: string | null;
  /** The commit planned, when known. */
  commit?: string | null;
  /** For `blocked`: what the site needs. */
  needs?: string[];
  /**
   * The `@ref` of the document's key: null (or absent) for the cell of the component's default ref
   * (`environment/component`), the ref for `environment/component@ref`. Such cells are kept apart from
   * the default ones (`getRefCell`, `listRefCells`): they are never in `getCell`, `listCells` or history.
   */
  atRef?: string | null;
}

/** One version of a cell as the hub learnt it; the point-in-time matrix reads these. */
export type CellHistoryRow = Omit<CellRow, 'staleNotifiedFor' | 'planHash'>;

export interface RunRow {
  runId: string;
  site: string;
  agent: string;
  environment: string;
  component: string;
  status: PlanStatus;
  counts: PlanCounts | null;
  reason: string | null;
  plannedAt: number;
  receivedAt: number;
  /** true when the run found the same plan as the cell's previous run. */
  unchanged: boolean;
  summary: DocRun['summary'];
  detailBlob: string | null;
  docId: string;
  /** The ref planned; absent or null for a component without a repository. */
  ref?: string | null;
  /** The commit planned, when known. */
  commit?: string | null;
  /** The run's cell is `environment/component@atRef` (a ref other than the default); null: the default cell. */
  atRef?: string | null;
}

export interface SiteRow {
  site: string;
  lastContactAt: number | null;
  /** The peer the last bundle of the site came through (`direct` when no relay). */
  upstream: string | null;
  /** `lastContactAt` for which an `unreachable` webhook was queued. */
  unreachableNotifiedFor: number | null;
}

export interface DocChunk {
  docId: string;
  site: string;
  agent: string;
  epoch: number;
  bytes: Uint8Array;
  /** The whole document (a `save()`): replaces the document's earlier chunks. */
  whole?: boolean;
}

export interface DownlinkRow {
  seq: number;
  site: string;
  agent: string | null;
  kind: 'ack' | 'control' | 'blob';
  /** For acks: an older undelivered ack for the same document is superseded. */
  docId: string | null;
  requestId: string | null;
  /**
   * A later row with the same key replaces this one, so a queue that a sender could grow without
   * end holds one row instead (a rejection per site, agent and code). Null or absent: never replaced.
   */
  replaceKey?: string | null;
  bytes: Uint8Array;
  expiresAt: number;
}

export type PlanRequestState = 'pending' | 'delivered' | 'done' | 'expired' | 'refused';

export interface PlanRequestRow {
  requestId: string;
  site: string;
  agent: string;
  environment: string;
  component: string;
  state: PlanRequestState;
  requestedAt: number;
  expiresAt: number;
  deliveredAt: number | null;
  doneAt: number | null;
  runId: string | null;
  /** The ref asked for; absent or null: the component's default ref. */
  ref?: string | null;
  /** The commit asked for, when one was named. */
  commit?: string | null;
}

export interface WebhookRow {
  /** Dedupe key: one row per transition, so a transition notifies at most once. */
  id: string;
  url: string;
  event: string;
  body: string;
  attempts: number;
  nextAt: number;
  state: 'pending' | 'sent' | 'failed';
  lastError: string | null;
}

export interface BlobRow {
  sha256: string;
  size: number;
  contentType: string;
  /** Where the adapter keeps the bytes (file path). */
  path: string;
  receivedAt: number;
}

export interface PeerRow {
  /** sha256 hex of the bearer token; the token itself is never stored. */
  tokenSha256: string;
  name: string;
  sites: string[];
}

/** A person (or a CI job) who uses the dashboard or `/api` (DESIGN S5). */
export interface UserRow {
  name: string;
  roles: Role[];
  /** sha256 hex of the operator token; null for a user who signs in only through the SSO proxy. */
  tokenSha256: string | null;
  createdAt: number;
  revokedAt: number | null;
}

/** A dashboard session; the cookie value itself is never stored. */
export interface SessionRow {
  /** sha256 hex of the session id the cookie carries. */
  idSha256: string;
  user: string;
  createdAt: number;
  expiresAt: number;
}

/** One audit log entry (who did what, how it ended, when, from where). `id` grows with every entry. */
export interface AuditRow {
  id: number;
  at: number;
  actor: string;
  via: string;
  action: AuditAction;
  target: string;
  outcome: 'ok' | 'denied' | 'failed';
  detail: string | null;
  address: string;
}

/** `hub approver add`: who holds which approver key, so the dashboard names people. */
export interface ApproverRow {
  name: string;
  /** `ed25519:<base64url>`. */
  key: string;
  addedAt: number;
}

/** An approval submitted at the hub (`POST /api/approvals`) and queued on the site's downlink. */
export interface ApprovalRow {
  approvalId: string;
  site: string;
  runId: string;
  environment: string;
  component: string;
  ref: string;
  commit: string;
  planFileSha256: string;
  approver: string;
  approvedAt: number;
  expiresAt: number;
  /** The user who submitted it. */
  submittedBy: string;
  submittedAt: number;
  /** When a relay (or the agent) pulled its control bundle from the downlink; null until then. */
  deliveredAt: number | null;
}

/** The agent's `applies[runId]` as the hub last read it; agent times corrected to hub time. */
export interface ApplyRow {
  site: string;
  agent: string;
  runId: string;
  environment: string;
  component: string;
  state: 'waiting-quorum' | 'applying' | 'applied' | 'apply-failed' | 'refused';
  reason: string | null;
  approvalIds: string[];
  approvers: string[];
  receivedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  errorExcerpt: string | null;
  nextRunId: string | null;
  updatedAt: number;
}

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
  limit: number;
}

/**
 * The hub's storage (DESIGN C2). Reads are small and specific; every write goes through `commit`
 * so each adapter implements atomicity once. A PostgreSQL adapter implements the same interface and
 * passes the same contract suite (`test/storeContract.ts`).
 */
export interface HubStore {
  commit(writes: WriteSet): Promise<void>;

  getAgent(site: string, agent: string): Promise<AgentRow | null>;
  listAgents(site?: string): Promise<AgentRow[]>;
  peerByToken(tokenSha256: string): Promise<PeerRow | null>;

  hasBundle(id: string): Promise<boolean>;
  /** A document's stored chunks in order: the first is a whole `save()` once one was stored. */
  docChunks(docId: string): Promise<Uint8Array[]>;

  getCell(site: string, environment: string, component: string): Promise<CellRow | null>;
  listCells(site?: string): Promise<CellRow[]>;
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

  getBlob(sha256: string): Promise<BlobRow | null>;
  /** Blobs announced for a document that the hub holds. */
  heldBlobsFor(docId: string): Promise<string[]>;
  /** Documents that announced a blob. */
  docsAnnouncing(sha256: string): Promise<string[]>;

  readDownlink(site: string, after: number, limit: number): Promise<DownlinkRow[]>;

  getPlanRequest(requestId: string): Promise<PlanRequestRow | null>;
  listPlanRequests(filter?: { site?: string; open?: boolean }): Promise<PlanRequestRow[]>;

  dueWebhooks(now: number, limit: number): Promise<WebhookRow[]>;
  getWebhook(id: string): Promise<WebhookRow | null>;

  getUser(name: string): Promise<UserRow | null>;
  userByToken(tokenSha256: string): Promise<UserRow | null>;
  /** Every user, revoked ones included, by name. */
  listUsers(): Promise<UserRow[]>;
  getSession(idSha256: string): Promise<SessionRow | null>;
  /** Newest first; `before` pages by `id` (entries with a lower id only). */
  listAudit(q: { limit: number; before?: number }): Promise<AuditRow[]>;

  /** Approvers by name. */
  listApprovers(): Promise<ApproverRow[]>;
  getApproval(approvalId: string): Promise<ApprovalRow | null>;
  /** Approvals of one site (and run), oldest first, at most `limit`. */
  listApprovals(q: { site: string; runId?: string; limit: number }): Promise<ApprovalRow[]>;
  /** The agent's apply records of a site (for `runIds` only, when given). */
  listApplies(site: string, runIds?: readonly string[]): Promise<ApplyRow[]>;

  /**
   * Applies retention; never removes the run a cell currently shows (but an expired `@ref` cell goes
   * with all its runs). Also drops sessions past their expiry and audit entries older than `failureMaxAgeMs`.
   */
  prune(policy: RetentionPolicy, now: number): Promise<PruneResult>;

  close(): Promise<void>;
}
