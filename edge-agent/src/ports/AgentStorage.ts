import type { ApplyRecord } from './ApplyStore.js';

/**
 * Rows of the agent's storage. Times are milliseconds on the agent's clock unless named otherwise.
 * The storage keeps them and answers small, specific questions about them; what they mean (when an
 * epoch is sealed, acknowledged or pruned, what goes up again) is decided by core's `AgentLedger`.
 */

/** One epoch of the agent's Automerge document (C1 in docs/architecture.md#invariants). */
export interface EpochRow {
  epoch: number;
  createdAt: number;
  /** When the epoch was sealed (no change is written to it after); null for the current one. */
  sealedAt: number | null;
  /** Heads of the latest hub ack (end to end, D4); `[]` before one. */
  ackedHeads: string[];
  ackedAt: number | null;
  /** Heads of the latest relay receipt that counts (custody, not acknowledgement). */
  receiptedHeads: string[];
  receiptedAt: number | null;
  /** When a hub rejection sent this epoch back to its acked heads. */
  rejectedAt: number | null;
  /** When its chunks were deleted because the hub holds all of it. */
  prunedAt: number | null;
  /** Bytes of its stored chunks. */
  bytes: number;
  /** Entries recorded in it (runs and fact updates): what `maxDocChanges` counts. */
  changes: number;
}

/** One recorded run (the document holds its summary; this row is the agent's index of it). */
export interface RunRow {
  runId: string;
  epoch: number;
  environment: string;
  component: string;
  /** A ref other than the component's default; null for the default cell. */
  cellRef: string | null;
  status: string;
  planHash: string | null;
  finishedAt: number;
  recordedAt: number;
  /** Recorded as a confirmation of the cell's previous plan. */
  unchanged: boolean;
  detailBlob: string | null;
  /** When a hub ack showed the hub holds it. */
  ackedAt: number | null;
}

/** A content-addressed detail blob; `data` is null once acknowledged or dropped (its row stays). */
export interface BlobRow {
  sha256: string;
  size: number;
  contentType: string;
  data: Uint8Array | null;
  runId: string | null;
  /** The run's status when stored, `dropped` once the queue bound dropped its bytes. */
  status: string;
  createdAt: number;
  /** Announced in a bundle a relay receipted. */
  announcedAt: number | null;
  uploadedAt: number | null;
  uploadUpstream: string | null;
  ackedAt: number | null;
  droppedAt: number | null;
}

/** A blob row without its bytes (what lists answer). */
export type BlobInfo = Omit<BlobRow, 'data'> & { held: boolean };

/** Fields of a stored blob to change; a blob not stored is left alone. `data: null` frees its bytes. */
export type BlobUpdate = { sha256: string } & Partial<Omit<BlobRow, 'sha256' | 'data'>> & { data?: null };

export interface PushRow {
  bundleId: string;
  epoch: number;
  heads: string[];
  bytes: number;
  createdAt: number;
  upstream: string | null;
  receipt: string | null;
  receiptAt: number | null;
}

/** An upstream's health and the agent's downlink cursor there. */
export interface UpstreamRow {
  url: string;
  cursor: string | null;
  lastOkAt: number | null;
  lastErrorAt: number | null;
  lastError: string | null;
  consecutiveFailures: number;
}

/** A hub rejection of this agent's bundles, one per code. */
export interface RejectionRow {
  code: string;
  bundleIds: string[];
  count: number;
  /** Hub clock. */
  firstAt: number;
  /** Hub clock. */
  lastAt: number;
  receivedAt: number;
}

export interface PlanRequestRow {
  requestId: string;
  environment: string;
  component: string;
  receivedAt: number;
  state: 'accepted' | 'refused' | 'expired';
  detail: string | null;
}

/**
 * Everything one ledger transaction writes, applied atomically: all of it is durable or none of it is
 * (D1). Applied in the order the fields are listed here.
 */
export interface AgentWriteSet {
  /** Upserted by key. */
  meta?: Record<string, string>;
  /** Upserted by epoch (whole rows). */
  epochs?: EpochRow[];
  /** Epochs whose chunks are all deleted, before `chunks` is appended (a snapshot replaces them). */
  chunkResets?: number[];
  /** Appended in this order. */
  chunks?: { epoch: number; data: Uint8Array }[];
  /** Inserted; a `runId` already stored fails the whole write set. */
  runs?: RunRow[];
  runAcks?: { runId: string; ackedAt: number }[];
  /** Epochs whose acknowledged runs are deleted (the epoch was pruned). */
  ackedRunsDeleted?: number[];
  /** Inserted unless a blob with the same sha256 is stored. */
  blobs?: BlobRow[];
  blobUpdates?: BlobUpdate[];
  /** Upserted by bundle id. */
  pushes?: PushRow[];
  /** Upserted by url (whole rows). */
  upstreams?: UpstreamRow[];
  /** Set by name. */
  counters?: Record<string, number>;
  /** Codes deleted, before `rejections` is upserted. */
  rejectionDeletes?: string[];
  /** Upserted by code. */
  rejections?: RejectionRow[];
  /** Inserted unless the request id is stored. */
  planRequests?: PlanRequestRow[];
  /** Upserted by run id. */
  applies?: { record: ApplyRecord; updatedAt: number }[];
  /** Every held cell and run entry deleted (they were written into the document), before the two below. */
  heldCleared?: boolean;
  /** Upserted by cell key. */
  heldCells?: HeldCellRow[];
  /** Upserted by run id. */
  heldRuns?: HeldRunRow[];
}

/**
 * A result recorded while more were coming, not yet written into the document
 * (docs/decisions/370-one-change-per-push.md): the cell as readers see it, its canonical JSON.
 */
export interface HeldCellRow {
  cellKey: string;
  /** The epoch its runs were recorded in (the one it is written into). */
  epoch: number;
  cell: string;
  /** When the first of its results was held (ledger clock). */
  heldAt: number;
}

/** A changed plan's run entry held with its cell (decision 370): the packed entry's canonical JSON. */
export interface HeldRunRow {
  runId: string;
  /** The epoch its run row was recorded in (the one it is written into). */
  epoch: number;
  run: string;
  heldAt: number;
  /**
   * Until when it may wait for its round (ledger clock, ms; decision 485): a push after then writes it.
   * Kept so a restart neither sends it early nor holds it longer. `null`: it does not wait (nor does a
   * row held before deadlines were stored): it goes with the next push.
   */
  waitUntil: number | null;
}

/**
 * Epochs and their chunks (the first part of `test/agentStorageContract.ts`): what `EpochDocs` loads and
 * starts, and what the ledger seals, acknowledges and prunes.
 */
export interface EpochStorage {
  /**
   * Applies `writes` only if no epoch is stored yet, deciding inside the transaction under the write
   * lock; false (nothing written) when one is. Two processes opening one fresh store (the daemon and
   * `status`) must not both start epoch 1: the second snapshot would hide the first one's changes.
   */
  commitFirst(writes: AgentWriteSet): boolean;
  /** Epochs in order; `unpruned` only those whose chunks are still held. */
  epochs(which: 'all' | 'unpruned'): EpochRow[];
  epoch(epoch: number): EpochRow | undefined;
  latestEpoch(): number | null;
  /** An epoch's chunks in the order appended. */
  chunks(epoch: number): Uint8Array[];
  chunkCount(epoch: number): number;
}

/** Runs: what is unacknowledged (pending pushes, acks, status) and a cell's own runs (the act loop). */
export interface RunStorage {
  /** Unacknowledged runs of an epoch. */
  unackedRuns(epoch: number): RunRow[];
  unackedRunCount(): number;
  /** The earliest `finishedAt` of an unacknowledged run (answered from an index: asked per record). */
  oldestUnackedFinish(): number | null;
  /** Whether an unacknowledged run of `epoch` has one of `statuses`. */
  hasUnackedRun(epoch: number, statuses: readonly string[]): boolean;
  /** Runs of one cell (`cellRef` null: the default ref's), newest first, at most `limit`. */
  cellRuns(environment: string, component: string, cellRef: string | null, limit: number): RunRow[];
  /** The newest run of the cell after `runId` that is not a confirmation (`unchanged`). */
  latestChangedRunAfter(
    environment: string,
    component: string,
    cellRef: string | null,
    runId: string,
  ): string | undefined;
  /** Cells held out of the document (decision 370), by cell key. */
  heldCells(): HeldCellRow[];
  /** Run entries held out of the document (decision 370), by run id. */
  heldRuns(): HeldRunRow[];
}

/** Blobs (redacted details): the blob queue, its bound and what to upload again. */
export interface BlobStorage {
  blob(sha256: string): BlobInfo | undefined;
  /**
   * Blobs of `epoch`'s runs not announced, acknowledged or dropped yet; with `announcedBefore`, also
   * those announced at or before it and uploaded, still without a hub ack (an announcement a relay
   * receipted that never reached the hub: docs/decisions/412-every-held-blob-receipted.md).
   */
  unannouncedBlobs(epoch: number, announcedBefore?: number): BlobInfo[];
  /** Blobs announced and neither acknowledged nor dropped. */
  announcedBlobs(): BlobInfo[];
  /**
   * Blobs held and not acknowledged by the hub, oldest first, with their bytes: those not uploaded yet,
   * and those an upstream took at or before `uploadedBefore` (no hub receipt since: upload them again).
   */
  blobsToUpload(limit: number, uploadedBefore?: number): BlobRow[];
  /** How many blobs an upstream took that the hub has not acknowledged yet. */
  blobsAwaitingReceipt(): number;
  /** Those blobs, oldest upload first, at most `limit`. */
  awaitingReceipt(limit: number): BlobInfo[];
  /** Blobs held with one of `statuses`, oldest first. */
  heldBlobs(statuses: readonly string[]): BlobInfo[];
  /** Count and bytes of blobs held (`unackedOnly`: and not acknowledged). */
  blobTotals(unackedOnly: boolean): { count: number; bytes: number };
}

/** The sync's own records: meta, pushes, upstreams, counters, rejections, plan requests and applies. */
export interface SyncStorage {
  meta(key: string): string | undefined;
  lastPush(): PushRow | undefined;
  upstream(url: string): UpstreamRow | undefined;
  /** By url. */
  upstreams(): UpstreamRow[];
  counter(name: string): number;
  /** Newest received first, then by code. */
  rejections(): RejectionRow[];
  planRequest(requestId: string): PlanRequestRow | undefined;
  apply(runId: string): ApplyRecord | undefined;
  /** Records in `state` by run id, at most 1000. */
  appliesIn(state: string): ApplyRecord[];
}

/**
 * The agent's durable storage: rows and chunks in (one `commit` per transaction), rows and chunks out,
 * as the four read slices above; each part of the ledger is typed on the slices it reads, and only
 * `AgentLedger` commits. Adapters: `SqliteAgentStorage` (one SQLite file, WAL, synchronous=FULL) and
 * `MemoryAgentStorage`; both pass `test/agentStorageContract.ts`. Every method is synchronous: a commit
 * is durable when it returns.
 */
export interface AgentStorage extends EpochStorage, RunStorage, BlobStorage, SyncStorage {
  /** Where it lives, for messages a person reads (a file path). */
  readonly location: string;
  /** Applies `writes` in one transaction; throws (and keeps nothing of it) when it cannot. */
  commit(writes: AgentWriteSet): void;
  close(): void;
}

/** A store that cannot be opened or read (not an agent store, another agent's, damaged); the message says what to do. */
export class StoreOpenError extends Error {
  readonly code = 'store-unusable';
  constructor(message: string) {
    super(message);
    this.name = 'StoreOpenError';
  }
}
