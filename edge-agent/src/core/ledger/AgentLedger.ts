import * as A from '@automerge/automerge';
import {
  type AckPayload,
  type ControlPayload,
  cellKey,
  type DocPublicationState,
  type RejectionPayload,
} from '@driftline/protocol';
import { type AgentStorage, type AgentWriteSet, StoreOpenError } from '../../ports/AgentStorage.js';
import type {
  AckResult,
  AgentRejection,
  AgentStore,
  PendingDelta,
  RecordRunInput,
  RecordRunResult,
  StoreStatus,
} from '../../ports/AgentStore.js';
import type { ApplyRecord, ApplyStore } from '../../ports/ApplyStore.js';
import type { BlobToUpload } from '../../ports/Uplink.js';
import { type AgentAutomergeDoc, mergeFacts, readCell, updateFacts, writeApply } from '../doc/agentDoc.js';
import { ackWrites } from './acks.js';
import { blobsToUpload, detailUploads } from './blobQueue.js';
import { EpochDocs, type LedgerStats } from './EpochDocs.js';
import { appendChange, type EpochLimits, sealOrCompact } from './epochs.js';
import { factsToWrite, type GivenFacts } from './facts.js';
import { PendingBytes, type PendingContext, pendingDeltas } from './pending.js';
import { planRequestChange } from './planRequestLog.js';
import { enforceQueueBound, queueBytes } from './queueBound.js';
import { recordBatch } from './recordBatch.js';
import { agentRejection, type PushRecord, pushWrites, rejectionWrites } from './resend.js';
import { readStatus } from './status.js';
import { newUpstream, upstreamResult } from './upstreams.js';

export interface AgentLedgerOptions extends Partial<EpochLimits> {
  site: string;
  agent: string;
  /** Bound on queued bytes (documents + blobs), D5. */
  maxQueueBytes?: number;
  /**
   * Re-send changes a relay receipted but the hub never acknowledged after this long (a relay that lost
   * what it receipted). Default 6 hours.
   */
  resendAfterMs?: number;
  /** Re-send changes the hub rejected this long after the rejection arrived. Default 5 minutes. */
  rejectedRetryMs?: number;
  now?: () => number;
}

/**
 * The agent's ledger (steps 4–8 of docs/architecture.md#the-trip): records runs into its Automerge epochs, says what to push,
 * takes relay receipts and hub acks, prunes, seals epochs, bounds the queue. It decides; its storage
 * (`AgentStorage`) keeps rows and chunks, one write set per transaction. Decision 120 maps D4, C1 and
 * resend to the functions beside this file.
 */
export class AgentLedger implements AgentStore, ApplyStore {
  private readonly opts: Required<Omit<AgentLedgerOptions, 'site' | 'agent'>> & {
    site: string;
    agent: string;
  };
  private readonly docs: EpochDocs;
  private readonly counts: LedgerStats = { commits: 0, docsLoaded: 0, docsHeld: 1 };
  private readonly pendingBytes = new PendingBytes();
  /** Facts given before the document was open (`updateFacts`), not written yet. */
  private deferredFacts: GivenFacts | undefined;
  /** Unacknowledged runs, kept in memory (counting them per record would grow with weeks offline). */
  private unacked: number;
  /** Queue bytes as last measured plus what was added since; the bound is re-measured exactly when near. */
  private queueEstimate: number;

  constructor(
    readonly storage: AgentStorage,
    options: AgentLedgerOptions,
  ) {
    this.opts = {
      maxDocBytes: 512 * 1024,
      maxQueueBytes: 512 * 1024 * 1024,
      maxDocChanges: 2000,
      compactAfterChunks: 16,
      resendAfterMs: 6 * 3600_000,
      rejectedRetryMs: 300_000,
      now: Date.now,
      ...options,
    };
    this.checkIdentity();
    this.docs = EpochDocs.open(storage, this.counts, this.opts, this.opts.now);
    this.unacked = storage.unackedRunCount();
    this.queueEstimate = queueBytes(storage);
  }

  private checkIdentity(): void {
    const { site, agent } = this.opts;
    const held = { site: this.storage.meta('site'), agent: this.storage.meta('agent') };
    if (held.site === undefined) this.commit({ meta: { site, agent } });
    else if (held.site !== site || held.agent !== agent)
      throw new StoreOpenError(
        `the store at ${this.storage.location} belongs to ${held.site}/${held.agent}, not ${site}/${agent} ` +
          '(point data_dir at this agent’s own directory)',
      );
  }

  /** Commits one write set (one transaction, one fsync), counted in `stats()`. */
  private commit(w: AgentWriteSet): void {
    this.storage.commit(w);
    this.counts.commits++;
  }

  /**
   * Commits `w` plus the current document's change from `before` to `next` (`entries` recorded
   * entries), then makes `next` current. After a failure the document is rebuilt from storage.
   */
  private commitChange(
    before: AgentAutomergeDoc,
    next: AgentAutomergeDoc,
    w: AgentWriteSet = {},
    entries = 1,
  ) {
    try {
      const row = this.currentRow();
      const step = appendChange(row, before, next, entries);
      if (step) {
        w.chunks = [...(w.chunks ?? []), { epoch: row.epoch, data: step.chunk }];
        w.epochs = [...(w.epochs ?? []), step.row];
      }
      this.commit(w);
    } catch (e) {
      this.docs.reload(before);
      throw e;
    }
    this.docs.doc = next;
  }

  private currentRow() {
    const row = this.storage.epoch(this.docs.epoch);
    if (!row) throw new StoreOpenError(`epoch ${this.docs.epoch} has no row (the store is damaged)`);
    return row;
  }

  /** Loads an epoch's document; the caller owns it (free it with `A.free`). */
  loadEpoch(epoch: number): AgentAutomergeDoc {
    this.docs.startIfFresh();
    return this.docs.load(epoch);
  }

  stats(): LedgerStats {
    return { ...this.counts };
  }

  record(input: RecordRunInput): RecordRunResult {
    return this.recordMany([input])[0] as RecordRunResult;
  }

  /**
   * Records runs that finished together: one Automerge change, one write set, one fsync for all of them.
   * Nothing of the batch is durable, or reported recorded, before that commit; if it fails, none of it
   * is (and the caller may record them one by one).
   */
  recordMany(inputs: readonly RecordRunInput[]): RecordRunResult[] {
    if (inputs.length === 0) return [];
    this.flushFacts();
    const now = this.opts.now();
    const before = this.docs.doc;
    const recordedIn = this.docs.epoch;
    let next: AgentAutomergeDoc = before;
    let sealed: ReturnType<typeof sealOrCompact> | undefined;
    let batch: ReturnType<typeof recordBatch> | undefined;
    let queue = this.queueEstimate;
    try {
      const w: AgentWriteSet = {};
      const depth = { count: this.unacked, oldest: this.storage.oldestUnackedFinish() };
      batch = recordBatch(w, before, this.docs.facts, inputs, recordedIn, depth, now);
      next = batch.doc;
      let row = this.currentRow();
      let chunks = this.storage.chunkCount(recordedIn);
      const step = appendChange(row, before, next, inputs.length);
      if (step) {
        w.chunks = [...(w.chunks ?? []), { epoch: recordedIn, data: step.chunk }];
        row = step.row;
        chunks++;
      }
      w.epochs = [row];
      sealed = sealOrCompact(w, row, chunks, next, this.opts, this.opts, now);
      if (sealed.kind === 'sealed') this.docs.adopt();
      queue += batch.added;
      if (sealed.kind === 'sealed' || queue > this.opts.maxQueueBytes * 0.9)
        queue = enforceQueueBound(this.storage, w, this.opts.maxQueueBytes, now);
      this.commit(w);
    } catch (e) {
      // The in-memory document was advanced past what was committed (Automerge allows one successor per
      // document state): rebuild it from storage so the next record starts from the truth.
      if (sealed?.kind === 'sealed') this.docs.release(sealed.next.doc);
      this.docs.reload(before);
      throw e;
    }
    if (!batch || !sealed) throw new Error('recordMany: the batch was not built');
    this.queueEstimate = queue;
    this.unacked += inputs.length;
    if (sealed.kind === 'sealed') {
      this.docs.release(sealed.sealedDoc); // the sealed epoch's handle: only pending() reloads it now
      this.docs.doc = sealed.next.doc;
      this.docs.epoch = sealed.next.epoch;
      this.docs.facts = null;
    } else {
      this.docs.doc = next;
      this.docs.facts = batch.facts;
    }
    const last = inputs.length - 1;
    return batch.unchanged.map((u, i) => ({
      epoch: i === last ? this.docs.epoch : recordedIn,
      unchanged: u,
      sealed: sealed.kind === 'sealed' && i === last,
    }));
  }

  /** Writes the publications' delivery states into the document's `bundles` map, so they travel as facts. */
  setPublicationStates(states: Record<string, DocPublicationState>): void {
    this.flushFacts();
    const before = this.docs.doc;
    const next = A.change(before, { message: 'bundles', time: Math.floor(this.opts.now() / 1000) }, (d) => {
      const want = JSON.parse(JSON.stringify(states)) as Record<string, DocPublicationState>;
      if (!d.bundles) d.bundles = {};
      for (const [id, v] of Object.entries(want))
        if (JSON.stringify(d.bundles[id]) !== JSON.stringify(v)) d.bundles[id] = v;
    });
    if (A.getHeads(next).join() === A.getHeads(before).join()) return;
    this.commitChange(before, next);
  }

  /** Records where an approval of a run stands: its record, and the document's `applies` (it travels). */
  setApply(rec: ApplyRecord): void {
    this.flushFacts();
    const now = this.opts.now();
    const before = this.docs.doc;
    this.commitChange(before, writeApply(before, rec.apply, now), {
      applies: [{ record: rec, updatedAt: now }],
    });
  }

  applyRecord(runId: string): ApplyRecord | undefined {
    return this.storage.apply(runId);
  }

  appliesIn(state: ApplyRecord['apply']['state']): ApplyRecord[] {
    return this.storage.appliesIn(state);
  }

  /** A later run of the cell with a different plan: from the runs kept, else the cell the document shows. */
  laterRun(
    environment: string,
    component: string,
    cellRef: string | undefined,
    runId: string,
  ): string | undefined {
    const cell = readCell(this.docs.doc, cellKey(environment, component, cellRef));
    const shown = cell && cell.runId > runId ? cell.runId : undefined;
    return this.storage.latestChangedRunAfter(environment, component, cellRef ?? null, runId) ?? shown;
  }

  updateFacts(facts: GivenFacts): boolean {
    if (!this.docs.open) {
      // Not worth opening the document (compiling Automerge) for: written with the next change or push.
      this.deferredFacts = facts;
      return true;
    }
    this.deferredFacts = undefined;
    return this.writeFacts(facts);
  }

  /** The current epoch's number, without opening its document (`status()` measures what it would send). */
  currentEpoch(): number {
    return this.docs.epoch;
  }

  /** Whether the current document is in memory: an agent idle since it started has not opened it. */
  documentOpen(): boolean {
    return this.docs.open;
  }

  /** Writes facts given before the document was open, ahead of the change or push that opens it. */
  private flushFacts(): void {
    const facts = this.deferredFacts;
    if (!facts) return;
    this.deferredFacts = undefined;
    this.writeFacts(facts);
  }

  private writeFacts(facts: GivenFacts): boolean {
    const now = this.opts.now();
    const before = this.docs.doc;
    const uploads = detailUploads(this.storage);
    const queue = { depth: this.unacked, oldest: this.storage.oldestUnackedFinish(), uploads };
    const written = factsToWrite(this.docs.facts, facts, queue, now);
    if (!written) return false;
    const next = updateFacts(before, written, now);
    if (A.getHeads(next).join() === A.getHeads(before).join()) return false;
    this.commitChange(before, next);
    this.docs.facts = mergeFacts(this.docs.facts, written);
    return true;
  }

  lockedStreak(environment: string, component: string, cellRef?: string): number {
    let n = 0;
    for (const r of this.storage.cellRuns(environment, component, cellRef ?? null, 1000)) {
      if (r.status !== 'locked') break;
      n++;
    }
    return n;
  }

  private context(): PendingContext {
    const { site, agent, resendAfterMs } = this.opts;
    return { storage: this.storage, docs: this.docs, site, agent, now: this.opts.now(), resendAfterMs };
  }

  pending(): PendingDelta[] {
    this.flushFacts();
    return pendingDeltas(this.context());
  }

  recordPush(p: PushRecord): void {
    this.commit(pushWrites(this.storage, p, this.opts.now()));
  }

  recordPushFailure(upstream: string, error: string): void {
    const w: AgentWriteSet = {};
    upstreamResult(w, this.storage.upstream(upstream), upstream, error, this.opts.now());
    this.commit(w);
  }

  recordPullResult(upstream: string, error: string | null): void {
    const row = this.storage.upstream(upstream);
    const now = this.opts.now();
    const fresh =
      row && row.consecutiveFailures === 0 && row.lastOkAt !== null && now - row.lastOkAt < 60_000;
    if (error === null && fresh) return;
    const w: AgentWriteSet = {};
    upstreamResult(w, row, upstream, error, now);
    this.commit(w);
  }

  applyAck(ack: AckPayload): AckResult {
    const { w, result } = ackWrites(this.storage, this.docs, ack, this.opts, this.opts.now());
    this.commit(w);
    if (result.blobsDeleted > 0) this.rewriteFacts(); // their detailUploads entries go
    for (const e of result.epochsPruned) this.pendingBytes.forget(e);
    this.unacked -= result.runsAcked;
    this.queueEstimate = queueBytes(this.storage);
    return result;
  }

  recordRejection(rejection: RejectionPayload): boolean {
    if (rejection.site !== this.opts.site || rejection.agent !== this.opts.agent) return false;
    const w = rejectionWrites(this.storage, rejection, this.opts.now());
    if (!w) return false;
    this.commit(w);
    this.pendingBytes.clear(); // their `since` heads went back to the hub's ack
    return true;
  }

  clearRejections(): number {
    const codes = this.storage.rejections().map((r) => r.code);
    if (codes.length > 0) this.commit({ rejectionDeletes: codes });
    return codes.length;
  }

  rejections(): AgentRejection[] {
    return this.storage.rejections().map((r) => agentRejection(r, this.opts.rejectedRetryMs));
  }

  downlinkCursor(upstream: string): string | undefined {
    return this.storage.upstream(upstream)?.cursor ?? undefined;
  }

  setDownlinkCursor(upstream: string, cursor: string): void {
    const row = this.storage.upstream(upstream);
    this.commit({ upstreams: [{ ...(row ?? newUpstream(upstream)), cursor }] });
  }

  recordPlanRequest(
    req: Extract<ControlPayload, { type: 'plan-request' }>,
    state: 'accepted' | 'refused' | 'expired',
    detail: string | null,
  ): boolean {
    const c = planRequestChange(this.storage, this.docs.doc, req, state, detail, this.opts.now());
    if (c) this.commitChange(this.docs.doc, c.next, c.w);
    return !!c;
  }

  blobsToUpload(limit = 20): BlobToUpload[] {
    return blobsToUpload(this.storage, limit, this.opts.now() - this.opts.resendAfterMs);
  }

  markBlobUploaded(sha256: string, upstream: string): void {
    this.commit({ blobUpdates: [{ sha256, uploadedAt: this.opts.now(), uploadUpstream: upstream }] });
    this.rewriteFacts(); // its detailUploads entry
  }

  /** Writes the facts the document holds again, with what storage says now (detail blobs awaiting a receipt). */
  private rewriteFacts(): void {
    if (this.docs.open && this.docs.facts) this.writeFacts(this.docs.facts as GivenFacts);
  }

  status(): StoreStatus {
    return readStatus(this.storage, {
      site: this.opts.site,
      agent: this.opts.agent,
      epoch: this.docs.epoch,
      maxQueueBytes: this.opts.maxQueueBytes,
      queueBytes: queueBytes(this.storage),
      pendingChangeBytes: this.pendingBytes.total(this.context()),
      rejections: this.rejections(),
    });
  }

  close(): void {
    this.storage.close();
  }
}
