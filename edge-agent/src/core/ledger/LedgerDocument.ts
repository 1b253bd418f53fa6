import * as A from '@automerge/automerge';
import type { DocPublicationState } from '@driftline/protocol';
import { type AgentStorage, type AgentWriteSet, StoreOpenError } from '../../ports/AgentStorage.js';
import type { ApplyRecord } from '../../ports/ApplyStore.js';
import { type AgentAutomergeDoc, mergeFacts, updateFacts, writeApply } from '../doc/agentDoc.js';
import { detailUploads } from './blobQueue.js';
import { type CustodyOptions, sitters } from './custody.js';
import { EpochDocs, type LedgerStats } from './EpochDocs.js';
import { appendChange, type EpochLimits } from './epochs.js';
import { factsToWrite, type GivenFacts } from './facts.js';
import { PendingBytes, type PendingContext } from './pending.js';
import { queueBytes } from './queueBound.js';

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
  /**
   * How long an upstream may hold custody before what it holds goes again by another upstream, until some
   * upstream has delivered (then deadlines follow delivery times): docs/decisions/575. Default 1 hour.
   */
  custodyDeadlineMs?: number;
  /** Re-send changes the hub rejected this long after the rejection arrived. Default 5 minutes. */
  rejectedRetryMs?: number;
  /**
   * Longest an unchanged re-plan recorded while more results were coming is held out of the document
   * before a push writes it anyway (docs/decisions/370-one-change-per-push.md). Default 10 minutes.
   */
  holdConfirmationsMs?: number;
  /**
   * Longest a scheduled round's changed plan recorded while more results were coming waits for the round
   * before a push writes it, never more than a tenth of its cell's cadence (`sync.newsHoldS`,
   * docs/decisions/485-news-waits-for-its-round.md). Default 10 minutes; 0: with the next push. A
   * failure, a cell's first result and a plan no schedule ran never wait.
   */
  holdNewsMs?: number;
  /**
   * A quiet round is written as its heartbeat change, which a v2 push carries as a heartbeat
   * (`sync.wire: 2`; docs/decisions/500-heartbeat-rebuilds-the-change.md). Default false.
   */
  heartbeats?: boolean;
  now?: () => number;
}

/**
 * The ledger's document and how it commits: its options, the identity check, one write set per
 * transaction (with the document's change when there is one), the facts (deferred until the document
 * opens), and the non-run entries the document carries (publication states, applies). `AgentLedger`
 * builds on it: recording runs and the sync bookkeeping.
 */
export abstract class LedgerDocument {
  protected readonly opts: Required<Omit<AgentLedgerOptions, 'site' | 'agent'>> & {
    site: string;
    agent: string;
  };
  protected readonly docs: EpochDocs;
  protected readonly counts: LedgerStats = { commits: 0, docsLoaded: 0, docsHeld: 1 };
  protected readonly pendingBytes = new PendingBytes();
  /** Facts given before the document was open (`updateFacts`), not written yet. */
  private deferredFacts: GivenFacts | undefined;
  /** Unacknowledged runs, kept in memory (counting them per record would grow with weeks offline). */
  protected unacked: number;
  /** Queue bytes as last measured plus what was added since; the bound is re-measured exactly when near. */
  protected queueEstimate: number;

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
      custodyDeadlineMs: 3600_000,
      rejectedRetryMs: 300_000,
      holdConfirmationsMs: 600_000,
      holdNewsMs: 600_000,
      heartbeats: false,
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
  protected commit(w: AgentWriteSet): void {
    this.storage.commit(w);
    this.counts.commits++;
  }

  /**
   * Commits `w` plus the current document's change from `before` to `next` (`entries` recorded
   * entries), then makes `next` current. After a failure the document is rebuilt from storage.
   */
  protected commitChange(
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

  protected currentRow() {
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
  protected flushFacts(): void {
    const facts = this.deferredFacts;
    if (!facts) return;
    this.deferredFacts = undefined;
    this.writeFacts(facts);
  }

  private writeFacts(facts: GivenFacts): boolean {
    const now = this.opts.now();
    const before = this.docs.doc;
    const uploads = detailUploads(this.storage);
    const custodyOverdue = sitters(this.storage, now, this.custody())
      .slice(0, 10)
      .map((s) => ({ ...s, upstream: s.upstream.slice(0, 300) }));
    const queue = {
      depth: this.unacked,
      oldest: this.storage.oldestUnackedFinish(),
      uploads,
      custodyOverdue,
    };
    const written = factsToWrite(this.docs.facts, facts, queue, now);
    if (!written) return false;
    const next = updateFacts(before, written, now);
    if (A.getHeads(next).join() === A.getHeads(before).join()) return false;
    this.commitChange(before, next);
    this.docs.facts = mergeFacts(this.docs.facts, written);
    return true;
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

  protected context(): PendingContext {
    const { site, agent, resendAfterMs } = this.opts;
    return {
      storage: this.storage,
      docs: this.docs,
      site,
      agent,
      now: this.opts.now(),
      resendAfterMs,
      custody: this.custody(),
    };
  }

  /** Custody deadlines' options (custody.ts). */
  protected custody(): CustodyOptions {
    return { fallbackMs: this.opts.custodyDeadlineMs, resendAfterMs: this.opts.resendAfterMs };
  }

  /** Writes the facts the document holds again, with what storage says now (detail blobs awaiting a receipt). */
  protected rewriteFacts(): void {
    if (this.docs.open && this.docs.facts) this.writeFacts(this.docs.facts as GivenFacts);
  }

  close(): void {
    this.storage.close();
  }
}
