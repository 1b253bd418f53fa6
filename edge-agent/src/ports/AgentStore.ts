import type {
  AckPayload,
  AgentFacts,
  BlobAnnouncement,
  ControlPayload,
  PlanSummary,
} from '@driftline/protocol';
import type { BlobToUpload } from './Uplink.js';

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
  facts?: Omit<AgentFacts, 'queueDepth' | 'oldestUnsentAt' | 'reportedAt'>;
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
}

export interface AckResult {
  /** Runs newly known to be at the hub. */
  runsAcked: number;
  /** Sealed epochs deleted locally because the hub holds all of them. */
  epochsPruned: number[];
  blobsDeleted: number;
  /** The ack named an epoch this store does not hold (already pruned, or not ours). */
  unknownEpoch: boolean;
}

export interface StoreStatus {
  site: string;
  agent: string;
  epoch: number;
  docBytes: number;
  unackedRuns: number;
  oldestUnackedAt: number | null;
  bytesPending: number;
  blobsPending: number;
  lastPush: { at: number; ok: boolean; upstream: string | null; detail: string | null } | null;
  lastAckAt: number | null;
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
  }>;
}

/** The agent's durable store (DESIGN steps 4–8). */
export interface AgentStore {
  record(input: RecordRunInput): RecordRunResult;
  /**
   * Records runs that finished together in one transaction (one fsync) and one document change;
   * results in input order. Nothing of the batch is recorded unless all of it is.
   */
  recordMany(inputs: readonly RecordRunInput[]): RecordRunResult[];
  /** Publishes the agent's facts without a run (start-up); writes nothing when they have not changed. */
  updateFacts(facts: NonNullable<RecordRunInput['facts']>): boolean;
  /** Consecutive locked results recorded for a cell (to carry over into the next run). */
  lockedStreak(environment: string, component: string): number;
  pending(): PendingDelta[];
  /** A bundle carrying `heads` of `epoch` was pushed; `receipt` is the upstream's answer (or null when none came). */
  recordPush(p: {
    bundleId: string;
    epoch: number;
    heads: string[];
    bytes: number;
    upstream: string;
    receipt: string | null;
    blobs: string[];
  }): void;
  recordPushFailure(upstream: string, error: string): void;
  applyAck(ack: AckPayload): AckResult;
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
