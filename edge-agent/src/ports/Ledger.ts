import type {
  AckPayload,
  AgentFacts,
  BlobAnnouncement,
  ControlPayload,
  PlanSummary,
  RejectionPayload,
} from '@driftline/protocol';
import type { BlobToUpload } from './Uplink.js';

/** An upstream that held custody past its deadline: until it delivers, or `resendAfterMs` passes. */
export interface SatRecord {
  upstream: string;
  /** When it was first found sitting in this episode (agent clock). */
  since: number;
  /** Unacknowledged results it held then (the latest finding's count). */
  results: number;
  /** When the oldest receipt it sat on was given. */
  oldestAt: number;
  /** How many times in this episode what it held was sent again by another way. */
  resends: number;
}

/** A redacted plan detail, compressed, content-addressed. */
export interface StoredDetail {
  sha256: string;
  bytes: Uint8Array;
  contentType: string;
}

/** A run to record: the full redacted summary (resources included) and its compressed detail blob. */
export interface RecordRunInput {
  runId: string;
  summary: PlanSummary;
  /**
   * The redacted detail, compressed; absent for failures without a plan and for redaction failures.
   * As a function it is called only when the detail is stored: an unchanged plan's detail never is,
   * and compressing it anyway was a tenth of what recording cost.
   */
  detail?: StoredDetail | (() => StoredDetail);
  lockedStreak?: number;
  /** A ref other than the component's default: recorded in the cell `environment/component@ref`. */
  cellRef?: string;
  /**
   * Whether this plan, found equal to the plan of the run its cell shows (`runId`), may only confirm that
   * run (default: yes). No when that run's saved plan was applied or failed to apply: a confirmation
   * would leave the cell showing a run nobody can approve any more (decision 200).
   */
  mayConfirm?: (runId: string) => boolean;
  facts?: Omit<AgentFacts, 'queueDepth' | 'oldestUnsentAt' | 'reportedAt'>;
  /**
   * The cell's cadence, seconds, when a cron round ran this plan (not start-up's `planOnStart`, a plan
   * request, a manual, source or apply run): its news may then wait for the round's end, at most
   * min(`sync.newsHoldS`, a tenth of it) (docs/decisions/485-news-waits-for-its-round.md).
   */
  scheduledEveryS?: number;
}

export interface RecordRunResult {
  epoch: number;
  unchanged: boolean;
  /** The epoch was sealed and a new one started by this recording. */
  sealed: boolean;
}

/** One epoch's unacknowledged changes, ready to sign and push. */
export interface PendingDelta {
  epoch: number;
  docId: string;
  changes: Uint8Array;
  /** Heads of the epoch document after these changes. */
  heads: string[];
  sealed: boolean;
  /** Blobs recorded with these changes and not announced in a receipted bundle yet. */
  blobs: BlobAnnouncement[];
  /** true when the delta carries a failed, locked or redaction-failed result: pushed at `failure` priority. */
  hasFailure: boolean;
  /** The changes are everything since the hub's ack (not since a relay's receipt): a receipt covers all held before. */
  fromAck?: boolean;
  /**
   * A receipt of this epoch held past its upstream's custody deadline: this delta sends what it held again,
   * by another upstream (docs/decisions/575-custody-deadline-per-path.md).
   */
  overdue?: { by: string; at: number; deadlineMs: number };
}

export interface AckResult {
  /** Runs newly known to be at the hub. */
  runsAcked: number;
  /** Sealed epochs deleted locally because the hub holds all of them. */
  epochsPruned: number[];
  blobsDeleted: number;
  /** The ack named an epoch this store does not hold (already pruned, or not ours). */
  unknownEpoch: boolean;
  /** Rejections this ack outdated: the hub takes this agent's bundles now (enrolment took effect). */
  rejectionsCleared: number;
}

/**
 * A refusal of this agent's bundles by the hub (step 8 of docs/architecture.md#the-trip), kept until a hub ack newer than it
 * shows the hub takes them. One per code.
 */
export interface AgentRejection {
  /** `waiting for enrolment` when the hub does not know this agent (`unknown-agent`), else `rejected`. */
  state: 'waiting for enrolment' | 'rejected';
  /** A code of protocol's ERRORS table. */
  code: string;
  /** Bundles the hub refused with this code, and the latest of their ids. */
  count: number;
  bundleIds: string[];
  /** When the hub refused the latest of them (hub clock). */
  rejectedAt: number;
  /** When the rejection reached this agent (agent clock). */
  receivedAt: number;
  /** When the refused changes go up again (agent clock): at once if a hub ack comes first. */
  retryAt: number;
}

export interface StoreStatus {
  site: string;
  agent: string;
  epoch: number;
  docBytes: number;
  unackedRuns: number;
  oldestUnackedAt: number | null;
  bytesPending: number;
  /**
   * Results of a plan round under way held out of the document (decision 370): not in `bytesPending` yet.
   * `since`: when the oldest was first held; `dueBy`: when they go with the next push at the latest
   * (a changed plan: when its round's wait ends, or with the next push; decisions 370, 485).
   */
  held: { cells: number; runs: number; since: number | null; dueBy: number | null };
  /**
   * The changed plans among them (`held.runs`: news waiting for its round, decision 485) and `until` when
   * they go with the next push at the latest (`held.dueBy`: what is held goes together); `null` when none.
   * The deadline is stored, so a status beside the daemon or after a restart reads the same.
   */
  heldNews: { count: number; until: number | null };
  blobsPending: number;
  /** Blobs an upstream took (tus completion) that the hub has not acknowledged yet: uploaded again after resendAfterS. */
  blobsAwaitingReceipt: number;
  lastPush: { at: number; ok: boolean; upstream: string | null; detail: string | null } | null;
  lastAckAt: number | null;
  /** The hub's refusals not yet outdated by an ack, newest first (empty when the hub takes every bundle). */
  rejections: AgentRejection[];
  queueBytes: number;
  maxQueueBytes: number;
  boundInForce: boolean;
  dropped: { blobs: number };
  upstreams: Array<{
    url: string;
    lastOkAt: number | null;
    lastErrorAt: number | null;
    lastError: string | null;
    consecutiveFailures: number;
    /** Answers of this upstream cut as stalled (decisions 410, 515), and when the last was. */
    stalls: number;
    lastStallAt: number | null;
  }>;
  /** Every answer cut as stalled, downlink or push, all upstreams (`driftline_agent_upstream_stalls_total`). */
  upstreamStalls: number;
  /** Uploads of blobs an upstream took before, still unacknowledged (`driftline_agent_blob_reuploads_total`). */
  blobReuploads: number;
  /** Upstreams that held custody past their deadline, passed over for now (docs/decisions/575). */
  custodyOverdue: SatRecord[];
}

/**
 * The agent's durable store (steps 4–8 of docs/architecture.md#the-trip) as the sync engine and the daemon use it. Implemented by
 * core's `AgentLedger` over an `AgentStorage` (decision 120).
 */
export interface Ledger {
  record(input: RecordRunInput): RecordRunResult;
  /**
   * Records runs that finished together in one transaction (one fsync) and one document change;
   * results in input order. Nothing of the batch is recorded unless all of it is. `moreComing`: more
   * results follow soon (a round under way): the batch may be held out of the document (its rows
   * committed) until the next push, confirmations alone until the round's last result
   * (docs/decisions/370-one-change-per-push.md).
   */
  recordMany(inputs: readonly RecordRunInput[], opts?: { moreComing?: boolean }): RecordRunResult[];
  /**
   * Publishes the agent's facts without a run (start-up); writes nothing when they have not changed.
   * Before the document is open they are kept, and written with the next change or `pending()`.
   */
  updateFacts(facts: NonNullable<RecordRunInput['facts']>): boolean;
  /** Whether the document is in memory yet (an agent idle since it started has not compiled Automerge). */
  documentOpen(): boolean;
  /** Consecutive locked results recorded for a cell (to carry over into the next run). */
  lockedStreak(environment: string, component: string, cellRef?: string): number;
  pending(): PendingDelta[];
  /**
   * Writes the agent's presence (`presentAt`, one scalar) into the current document and answers what is
   * pending then: what the agent signs and pushes in a contact window it has nothing else to say in
   * (docs/decisions/450-contact-the-agent-proves.md).
   */
  presence(): PendingDelta[];
  /**
   * A bundle carrying `heads` of `epoch` was pushed; `receipt` is the upstream's answer (or null when
   * none came). `sentAt` is when the bundle was built: a receipt for one built before the latest
   * rejection does not count, since the rejection already asked for its changes again.
   */
  recordPush(p: {
    bundleId: string;
    epoch: number;
    heads: string[];
    bytes: number;
    upstream: string;
    receipt: string | null;
    blobs: string[];
    sentAt?: number;
    /** The push carried everything since the hub's ack (`PendingDelta.fromAck`). */
    fromAck?: boolean;
  }): void;
  recordPushFailure(upstream: string, error: string): void;
  /**
   * Upstreams that sat on custody past their deadline, passed over by pushes until they deliver or
   * `sync.resendAfterS` passes (docs/decisions/575-custody-deadline-per-path.md).
   */
  sitters(): SatRecord[];
  /**
   * What a downlink pull learnt of `upstream`: it answered (`error` null) or not. Written when it
   * changes what `status` shows (a failure, the first answer after failures, or a minute since the last
   * ok), not per held pull.
   */
  recordPullResult(upstream: string, error: string | null): void;
  /** The last exchange with `upstream` failed (what `status` shows as DOWN). */
  upstreamDown(upstream: string): boolean;
  /**
   * A downlink answer from `upstream` cut for making no progress (`sync.stallS`), or an answer due at once
   * (a push, a probe) that did not begin in time: counted (`driftline_agent_upstream_stalls_total`), kept
   * with its time, and recorded as that upstream's failure, so `status` names it
   * (docs/decisions/410-independent-downlinks.md, 515-answers-due-at-once.md).
   */
  recordStall(upstream: string, error: string): void;
  applyAck(ack: AckPayload): AckResult;
  /**
   * Records a hub rejection of this agent's bundles and forgets what relays receipted, so the next push
   * carries everything the hub has not acknowledged. false (nothing recorded) when a hub ack newer than
   * it arrived already, or when it is about another agent.
   */
  recordRejection(rejection: RejectionPayload): boolean;
  /** The hub took a bundle (its own receipt): every rejection is outdated. Returns how many were cleared. */
  clearRejections(): number;
  /** The rejections not yet outdated, newest first. */
  rejections(): AgentRejection[];
  downlinkCursor(upstream: string): string | undefined;
  setDownlinkCursor(upstream: string, cursor: string): void;
  /** Records a hub plan request once; false when this request id was seen before (at-least-once downlink). */
  recordPlanRequest(
    req: Extract<ControlPayload, { type: 'plan-request' }>,
    state: 'accepted' | 'refused' | 'expired',
    detail: string | null,
  ): boolean;
  /** Blobs held locally that no upstream has taken yet, oldest first (at most `limit`). */
  blobsToUpload(limit?: number): BlobToUpload[];
  markBlobUploaded(sha256: string, upstream: string): void;
  status(): StoreStatus;
  close(): void;
}
