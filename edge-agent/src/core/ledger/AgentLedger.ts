import {
  type AckPayload,
  type AgentFacts,
  type ControlPayload,
  cellKey,
  type RejectionPayload,
} from '@driftline/protocol';
import type { AgentWriteSet } from '../../ports/AgentStorage.js';
import type { ApplyRecord, ApplyStore } from '../../ports/ApplyStore.js';
import type {
  AckResult,
  AgentRejection,
  Ledger,
  PendingDelta,
  RecordRunInput,
  RecordRunResult,
  SatRecord,
  StoreStatus,
} from '../../ports/Ledger.js';
import type { BlobToUpload } from '../../ports/Uplink.js';
import {
  type AgentAutomergeDoc,
  type ConfirmMode,
  mergeFacts,
  readCell,
  recordRuns,
} from '../doc/agentDoc.js';
import { writePresence } from '../doc/presence.js';
import type { CellRef } from '../schedule/CellScheduler.js';
import { ackWrites } from './acks.js';
import { blobsToUpload, REUPLOADS, reuploadDue, reuploadsOf } from './blobQueue.js';
import { deadlineMs, sitters } from './custody.js';
import { appendChange, sealOrCompact } from './epochs.js';
import { type HeartbeatForm, HeartbeatForms } from './heartbeatForms.js';
import {
  type HeldResults,
  type HoldLimits,
  heldDue,
  heldSummary,
  holdBatch,
  loadHeld,
  nothingHeld,
} from './heldResults.js';
import { LedgerDocument } from './LedgerDocument.js';
import { confirmationWaitMs, newsWaitMs } from './newsWait.js';
import { pendingDeltas } from './pending.js';
import { planRequestChange, planStartChange } from './planRequestLog.js';
import { enforceQueueBound, queueBytes } from './queueBound.js';
import { recordBatch } from './recordBatch.js';
import { agentRejection, type PushRecord, pushWrites, rejectionWrites } from './resend.js';
import { RoundUnderWay } from './roundUnderWay.js';
import { readStatus } from './status.js';
import { newUpstream, pullResultWrites, stallWrites, upstreamWrites } from './upstreams.js';

export type { AgentLedgerOptions } from './LedgerDocument.js';

/**
 * The agent's ledger (steps 4–8 of docs/architecture.md#the-trip): records runs into its Automerge epochs, says what to push,
 * takes relay receipts and hub acks, prunes, seals epochs, bounds the queue. It decides; its storage
 * (`AgentStorage`) keeps rows and chunks, one write set per transaction (`LedgerDocument`, which it
 * builds on, holds the document, the commits and the facts). Decision 120 maps D4, C1 and resend to the
 * functions beside this file.
 */
export class AgentLedger extends LedgerDocument implements Ledger, ApplyStore {
  /**
   * The hub said (an ack's `readsConfirmed`) that it reads unchanged re-plans written apart from their cells:
   * this process writes them so (decision 330); until the first ack after a restart they rewrite their cells.
   */
  private confirmApart = false;
  /** How this process writes unchanged re-plans now: as heartbeat changes on hop v2 (decision 500). */
  private get confirmMode(): ConfirmMode {
    return this.confirmApart && this.opts.heartbeats ? 'heartbeat' : this.confirmApart;
  }
  /** Results held out of the document: cells by key, changed plans' run entries (decision 370; `heldResults.ts`). */
  private held: HeldResults = loadHeld(this.storage, this.opts.now(), this.opts.holdNewsMs);
  private readonly round = new RoundUnderWay(this.opts.holdConfirmationsMs, this.opts.resendAfterMs);
  private heldFacts: AgentFacts | undefined; // the facts of the last batch held, written with the results
  private readonly forms = new HeartbeatForms(this.storage, this.docs);

  record(input: RecordRunInput): RecordRunResult {
    return this.recordMany([input])[0] as RecordRunResult;
  }

  /**
   * Records runs that finished together: one Automerge change, one write set, one fsync for all of them.
   * Nothing of the batch is durable, or reported recorded, before that commit; if it fails, none of it
   * is (and the caller may record them one by one). `moreComing`: other results will follow soon (a
   * round under way); unless it answers a plan request the batch is then held out of the document, its
   * rows committed, and written with the next write or push (decision 370, `heldResults.ts`).
   */
  recordMany(inputs: readonly RecordRunInput[], opts: { moreComing?: boolean } = {}): RecordRunResult[] {
    if (inputs.length === 0) return [];
    this.flushFacts();
    const now = this.opts.now();
    this.round.recorded(opts.moreComing === true, inputs, now);
    const before = this.docs.doc;
    const recordedIn = this.docs.epoch;
    let next: AgentAutomergeDoc = before;
    let sealed: ReturnType<typeof sealOrCompact> | undefined;
    let batch: ReturnType<typeof recordBatch> | undefined;
    let queue = this.queueEstimate;
    try {
      const w: AgentWriteSet = {};
      const depth = { count: this.unacked, oldest: this.storage.oldestUnackedFinish() };
      const hold = { cells: this.held.cells, runs: this.held.runs, hold: opts.moreComing === true };
      batch = recordBatch(w, before, this.docs.facts, inputs, recordedIn, depth, now, this.confirmMode, hold);
      next = batch.doc;
      if (next === before)
        return this.holdRecorded(w, inputs, batch, recordedIn, now, this.holdWaits(inputs));
      const heldCount = this.held.cells.size + this.held.runs.size;
      if (heldCount > 0) w.heldCleared = true;
      let row = this.currentRow();
      let chunks = this.storage.chunkCount(recordedIn);
      const step = appendChange(row, before, next, inputs.length + heldCount);
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
    this.held = nothingHeld();
    this.heldFacts = batch.heldFacts;
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

  /** Commits a held batch: its run and blob rows and what it holds; the document is untouched. */
  private holdRecorded(
    w: AgentWriteSet,
    inputs: readonly RecordRunInput[],
    batch: ReturnType<typeof recordBatch>,
    epoch: number,
    now: number,
    waits: ReturnType<AgentLedger['holdWaits']>,
  ): RecordRunResult[] {
    const { held, cells, runs } = holdBatch(this.held, batch.held, epoch, now, waits.runs, waits.cells);
    w.heldCells = cells;
    w.heldRuns = runs;
    let queue = this.queueEstimate + batch.added;
    if (queue > this.opts.maxQueueBytes * 0.9)
      queue = enforceQueueBound(this.storage, w, this.opts.maxQueueBytes, now);
    this.commit(w);
    this.held = held;
    if (batch.heldFacts) this.heldFacts = batch.heldFacts;
    this.queueEstimate = queue;
    this.unacked += inputs.length;
    return batch.unchanged.map((u) => ({ epoch, unchanged: u, sealed: false }));
  }

  private holdLimits(): HoldLimits {
    return { confirmationsMs: this.opts.holdConfirmationsMs };
  }

  /** A cell as it stands here: held back for its round, else as the document has it. */
  private shownCell(key: string) {
    return this.held.cells.get(key) ?? readCell(this.docs.doc, key);
  }

  /**
   * How long each input's news may wait for its round, by run id (decision 485: a cell's first result
   * never does), and how long a cron round's confirmation may, by cell key (decision 370: half the
   * cadence, the shortest where a cell recurs; absent: `holdConfirmationsMs`).
   */
  private holdWaits(inputs: readonly RecordRunInput[]) {
    const runs = new Map<string, number>();
    const cells = new Map<string, number>();
    for (const i of inputs) {
      const key = cellKey(i.summary.environment, i.summary.component, i.cellRef);
      const first = this.shownCell(key) === undefined;
      const run = { status: i.summary.status, scheduledEveryS: i.scheduledEveryS, first };
      runs.set(i.runId, newsWaitMs(run, this.opts.holdNewsMs));
      const confirm = confirmationWaitMs(i.scheduledEveryS);
      if (confirm !== undefined) cells.set(key, Math.min(cells.get(key) ?? confirm, confirm));
    }
    return { runs, cells };
  }

  /** Writes the held results (and the held batch's facts) into the document as one change. */
  private writeHeld(): void {
    const count = this.held.cells.size + this.held.runs.size;
    if (count === 0) return;
    const now = this.opts.now();
    const before = this.docs.doc;
    const hold = { cells: this.held.cells, runs: this.held.runs, hold: false, at: now };
    const facts = this.heldFacts;
    const r = recordRuns(before, [], facts, this.docs.facts, this.confirmMode, hold);
    this.commitChange(before, r.doc, { heldCleared: true }, count);
    if (facts) this.docs.facts = mergeFacts(this.docs.facts, facts);
    this.held = nothingHeld();
    this.heldFacts = undefined;
  }

  /** The current epoch's document shows the held results too: they are written first. */
  override loadEpoch(epoch: number): AgentAutomergeDoc {
    this.docs.startIfFresh();
    if (epoch === this.docs.epoch) this.writeHeld();
    return super.loadEpoch(epoch);
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
    const key = cellKey(environment, component, cellRef);
    const cell = this.shownCell(key);
    const shown = cell && cell.runId > runId ? cell.runId : undefined;
    return this.storage.latestChangedRunAfter(environment, component, cellRef ?? null, runId) ?? shown;
  }

  /**
   * The cell's lock results in a row, its last run's included. That run's own count, as the cell keeps it
   * (`runPlan` counts `locked` and `failed`/`stuck-lock` alike; each epoch's cells seed the next): a
   * stuck-lock run is `failed`, so counting stored runs while `locked` ended the streak at it and the lock
   * read `locked` twice more before being stuck again (docs/decisions/555-stuck-lock-stays-stuck.md).
   * Stored runs are counted only for a cell whose result came without a count.
   */
  lockedStreak(environment: string, component: string, cellRef?: string): number {
    const kept = this.shownCell(cellKey(environment, component, cellRef))?.lockedStreak;
    if (kept !== undefined) return kept;
    let n = 0;
    for (const r of this.storage.cellRuns(environment, component, cellRef ?? null, 1000)) {
      if (r.status !== 'locked') break;
      n++;
    }
    return n;
  }

  /** Seconds within which more of a cron round follows, for a push's `ackLater` (decision 525). */
  ackLaterS(): number | undefined {
    return this.round.ackLaterS(this.opts.now());
  }

  pending(): PendingDelta[] {
    this.flushFacts();
    if (heldDue(this.held, this.opts.now(), this.holdLimits())) this.writeHeld();
    return pendingDeltas({ ...this.context(), heldRuns: this.held.runs });
  }

  presence(): PendingDelta[] {
    this.flushFacts();
    const before = this.docs.doc;
    this.commitChange(before, writePresence(before, this.opts.now()));
    return this.pending();
  }

  recordPush(p: PushRecord): void {
    const sat = this.sitterNames();
    this.commit(pushWrites(this.storage, p, this.opts.now(), this.custody()));
    // an upstream found sitting on custody: the hub hears of it with the facts (decision 575)
    if (this.sitterNames() !== sat) this.rewriteFacts();
  }

  private sitterNames(): string {
    return this.sitters()
      .map((s) => `${s.upstream} ${s.resends}`)
      .join('\n');
  }

  sitters(): SatRecord[] {
    return sitters(this.storage, this.opts.now(), this.custody());
  }

  recordPushFailure(upstream: string, error: string): void {
    this.commit(upstreamWrites(this.storage, upstream, error, this.opts.now()));
  }

  recordPullResult(upstream: string, error: string | null): void {
    const w = pullResultWrites(this.storage, upstream, error, this.opts.now());
    if (w) this.commit(w);
  }

  upstreamDown(upstream: string): boolean {
    return (this.storage.upstream(upstream)?.consecutiveFailures ?? 0) > 0;
  }

  recordStall(upstream: string, error: string): void {
    this.commit(stallWrites(this.storage, upstream, error, this.opts.now()));
  }

  /**
   * A delta of epoch `epoch` as a v2 push carries it when its last change is a heartbeat change (decision
   * 500); null: send the changes. While the hub holds a rejection against this agent, changes only: a
   * heartbeat it could not rebuild goes as the change itself. Derived once a change: `heartbeatForms.ts`.
   */
  heartbeatForm(epoch: number, changes: Uint8Array): HeartbeatForm | null {
    return this.forms.of(epoch, changes);
  }

  applyAck(ack: AckPayload): AckResult {
    if (ack.readsConfirmed) this.confirmApart = true;
    const sat = this.sitterNames();
    const { w, result } = ackWrites(this.storage, this.docs, ack, this.opts, this.opts.now());
    this.commit(w);
    // their detailUploads entries go; an upstream that delivered no longer sits (decision 575)
    if (result.blobsDeleted > 0 || this.sitterNames() !== sat) this.rewriteFacts();
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

  /** A plan of `cell` starts now: the requests it will answer say so (decision 560). Their ids. */
  planStarting(cell: CellRef): string[] {
    const c = planStartChange(this.docs.doc, cell, this.opts.now());
    if (c) this.commitChange(this.docs.doc, c.next);
    return c?.requestIds ?? [];
  }

  blobsToUpload(limit = 20): BlobToUpload[] {
    // A held plan's detail goes up after its run entry, as it always did (the hub waits for announced
    // blobs): with the held results once they are due, else it waits with them (decision 395).
    if (this.held.runs.size > 0 && heldDue(this.held, this.opts.now(), this.holdLimits())) this.writeHeld();
    const now = this.opts.now();
    // A blob uploaded before goes up again only as its wait (doubling per upload, capped) allows: read
    // more rows than asked, so blobs still waiting do not hide those due (decision 412). The wait is
    // `resendAfterMs`, or the custody deadline of an upstream found sitting on custody (decision 575):
    // what it took by tus goes again by another way, as its bundles did (uploadBlobs.ts tries it last).
    const sat = new Set(this.sitters().map((s) => s.upstream));
    const waitMs = (upstream: string) =>
      sat.has(upstream) ? deadlineMs(this.storage, upstream, this.custody()) : this.opts.resendAfterMs;
    const all = blobsToUpload(
      this.storage,
      limit * 4,
      sat.size > 0 ? now : now - this.opts.resendAfterMs,
    ).filter(
      (b) =>
        !b.previousUpload ||
        reuploadDue(
          b.previousUpload.at,
          this.storage.counter(reuploadsOf(b.sha256)),
          now,
          waitMs(b.previousUpload.upstream),
        ),
    );
    const due = this.held.runs.size === 0 ? all : all.filter((b) => !b.runId || !this.held.runs.has(b.runId));
    return due.slice(0, limit);
  }

  markBlobUploaded(sha256: string, upstream: string): void {
    const again = this.storage.blob(sha256)?.uploadedAt != null;
    const c = (name: string) => this.storage.counter(name);
    this.commit({
      blobUpdates: [{ sha256, uploadedAt: this.opts.now(), uploadUpstream: upstream }],
      // an upload of a blob an upstream took before: counted, and its next wait doubles (decision 412)
      ...(again
        ? { counters: { [REUPLOADS]: c(REUPLOADS) + 1, [reuploadsOf(sha256)]: c(reuploadsOf(sha256)) + 1 } }
        : {}),
    });
    this.rewriteFacts(); // its detailUploads entry
  }

  status(): StoreStatus {
    return readStatus(this.storage, {
      site: this.opts.site,
      agent: this.opts.agent,
      epoch: this.docs.epoch,
      maxQueueBytes: this.opts.maxQueueBytes,
      queueBytes: queueBytes(this.storage),
      pendingChangeBytes: this.pendingBytes.total(this.context()),
      held: heldSummary(this.held, this.holdLimits()),
      rejections: this.rejections(),
      custodyOverdue: this.sitters(),
    });
  }
}
