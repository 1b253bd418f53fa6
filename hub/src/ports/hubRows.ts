import type { AuditAction, DocRun, PlanCounts, PlanStatus, RelayStatus, Role } from '@driftline/protocol';

/**
 * The rows the hub stores (the `HubStore` port's vocabulary). Times in every row are milliseconds since
 * the epoch on the hub's clock unless named otherwise.
 */

/** Why a path's estimate was not used: it jumped away from the current one, or no time can satisfy it. */
export type HeldReason = 'jump' | 'contradicts-bounds';

/** A path estimate the hub did not take (docs/decisions/230-time-a-hop-cannot-forge.md); shown on the site view. */
export interface HeldClock {
  reason: HeldReason;
  /** The estimate as the path claimed it (agent clock minus hub clock). */
  offsetMs: number;
  uncertaintyMs: number;
  /** Hub time it was first held, and last seen. */
  since: number;
  lastAt: number;
  /** Estimates held in a row that agree with each other. */
  samples: number;
  /** The peer the last held estimate came through. */
  via: string;
}

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
  /** A path clock estimate held back, not used (docs/decisions/230-time-a-hop-cannot-forge.md); absent: none. */
  clockHeld?: HeldClock | null;
  /** `created` of the newest bundle taken from the agent (agent clock): older ones are replays to contact. */
  lastCreated?: number | null;
  /** The same time on the hub clock: no later bundle of the agent is dated before it. */
  lastCreatedAt?: number | null;
  upstream: string | null;
  /** Declared plan interval per cell key `environment/component`, seconds. */
  cadenceS: Record<string, number>;
  contactIntervalS: number | null;
  contactWindows: string[];
  /** Windows of the hub's config the agent says it holds (its `hubWindows` fact; decision 590). */
  hubWindows?: string[];
  /** The agent takes the hub's `contact-windows` control (its `reads` fact; decision 590). */
  readsHubWindows?: boolean;
  /** Ref patterns each cell key (`environment/component`) may plan; the first is its default ref. */
  refs?: Record<string, string[]>;
  /** Heads of the agent's git mirrors: repository → ref → commit. */
  sources?: Record<string, Record<string, string>>;
  /** The agent's document lists the plan requests it receives (decision 230): only its word delivers one. */
  confirmsRequests?: boolean;
  /** Provider builds in the agent's filesystem mirror (`host/ns/type version os_arch`). */
  providers?: string[];
  /** The agent's `os_arch` (`linux_amd64`). */
  platform?: string | null;
  /** The agent takes a small publication inside its manifest (its `reads` fact; decision 360). */
  readsInline?: boolean;
  /** The agent takes the hub's compact v2 publication manifest (its `reads` fact; decision 505). */
  readsWire2Publications?: boolean;
  /** The agent takes a git bundle's heads packed in that manifest (its `reads` fact; decision 520). */
  readsWire2GitHeads?: boolean;
  /** When the agent reported these facts, corrected to hub time. */
  factsReportedAt?: number | null;
  /** Upstreams the agent found sitting on custody (its `custodyOverdue` fact, times on the hub clock; decision 575). */
  custodyOverdue?: {
    upstream: string;
    results: number;
    oldestAt: number;
    since: number;
    resends: number;
    /** `since` on the agent's clock: names the episode (one webhook each). */
    episode: number;
  }[];
}

/** An agent row less the per-cell facts only a site's own pages read. */
export type AgentFacts = Omit<AgentRow, 'cadenceS' | 'refs' | 'sources' | 'providers'>;

/**
 * What fleet-wide reads need of an agent (`ReadStore.listAgentBriefs`): its facts, and how many default
 * cells (`environment/component`, no `@ref`) its cadence declares per environment.
 */
export interface AgentBrief extends AgentFacts {
  declared: Record<string, number>;
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
  /** How many of the plan's checks fail (decision 420); absent or null: the run reported no checks. */
  checksFailed?: number | null;
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
  /**
   * When the agent says it received the request (its own clock, from its signed document; decision
   * 230). Set: `delivered` is the agent's word, and only a run it started after this answers the request.
   */
  agentReceivedAt?: number | null;
  /**
   * For an agent that confirms what it receives: hub time by which its document should say the request
   * arrived (N contact intervals after the request); past it, still `pending`, the request is
   * `unconfirmed` and sent again (decision 230). Absent: an older agent, delivery is inferred.
   */
  confirmBy?: number | null;
  /**
   * When a relay (`relay`, the hub's peer) pulled the request from the downlink, hub clock; set once.
   * The request stays `pending` for an agent that confirms: a relay holding it is not delivery.
   */
  relayAt?: number | null;
  relay?: string | null;
  /**
   * When the agent started the plan that answers it, hub clock: its signed word (the request entry's
   * `startedAt`), or the answering run's own start. A `delivered` row with it is `running` in the API
   * (docs/decisions/560-plan-request-states.md): the stored state stays `delivered`, an open state.
   */
  startedAt?: number | null;
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

/**
 * One peer token (`hub peer add|rotate`): a relay, or an agent talking to the hub directly. A peer name
 * may hold several tokens while a rotation's grace period runs. The dates are absent on rows written
 * before peers were managed (docs/decisions/240-peers-and-relay-health.md).
 */
export interface PeerRow {
  /** sha256 hex of the bearer token; the token itself is never stored. */
  tokenSha256: string;
  name: string;
  sites: string[];
  /**
   * The relay's Ed25519 public key (`ed25519:…`, `hub peer add --key`): its signed exchange times and
   * custody records are checked with it (docs/decisions/290-signed-hop-chain.md). Absent: an older
   * relay, whose clock claims the hub only bounds (decision 230).
   */
  publicKey?: string | null;
  createdAt?: number;
  /** When the token last authenticated at this hub (written at most once a minute per token). */
  lastUsedAt?: number | null;
  /** When the token stops (or stopped) working: now for a revocation, now + grace for a rotated-out one. */
  revokedAt?: number | null;
  /** The last status a relay sent with this token (`POST /v1/status`), and when the hub took it. */
  status?: RelayStatus | null;
  statusAt?: number | null;
}

/** A person (or a CI job) who uses the dashboard or `/api` (S5 in docs/architecture.md#invariants). */
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
  /**
   * When it arrived, null until then: for an agent that confirms what it receives, the time its record
   * names it (hub clock; decision 300); for an older agent, when a relay pulled its control bundle.
   */
  deliveredAt: number | null;
  /** When the agent's word is due (an agent that confirms; decision 300): sent again past it. */
  confirmBy?: number;
  /** The approver's signature (base64url), kept so the hub can send the approval again. */
  signature?: string;
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
  /** Approvals of this run the agent refused, each with its own reason; `at` on the hub clock. */
  refused?: { approvalId: string; reason: string; at: number }[];
  receivedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  errorExcerpt: string | null;
  nextRunId: string | null;
  updatedAt: number;
}
