import * as A from '@automerge/automerge';
import { type EpochStorage, StoreOpenError } from '../../ports/AgentStorage.js';
import { type AgentAutomergeDoc, newEpochDoc, plainFacts, type StoredAgentDoc } from '../doc/agentDoc.js';
import { startEpoch } from './epochs.js';

/** What the ledger has done so far (what `stats()` reports and tests assert on). */
export interface LedgerStats {
  /** Write transactions committed (each one WAL fsync under SQLite's synchronous=FULL). */
  commits: number;
  /** Automerge documents loaded from storage. */
  docsLoaded: number;
  /** Documents held now: the current epoch's, plus any loaded for the ledger itself and not freed yet. */
  docsHeld: number;
}

const concat = (parts: readonly Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/**
 * The current epoch's document in memory, and every other one loaded only while it is read. Automerge's
 * WASM heap never shrinks and its finalizer runs only when V8 happens to collect, so every document
 * loaded for a moment is freed with `A.free` at once.
 *
 * The current document is loaded (or, on a fresh store, started by `start`) at its first use, not when
 * the ledger opens: an agent with nothing to record and no upstream answering never compiles Automerge
 * (the packaged agent compiles it on the first call, ~27 MB).
 */
export class EpochDocs {
  epoch: number;
  private held: AgentAutomergeDoc | undefined;
  private plain: Record<string, unknown> | null | undefined;

  constructor(
    private readonly storage: EpochStorage,
    /** The ledger's counters: documents loaded and held are counted here. */
    readonly stats: LedgerStats,
    epoch: number,
    /** On a fresh store: starts the first epoch and answers it (another process may have started it). */
    private readonly start?: () => { epoch: number; doc: AgentAutomergeDoc },
  ) {
    this.epoch = epoch;
  }

  /** The current epoch's documents; on a fresh store epoch 1 is started at the first use. */
  static open(
    storage: EpochStorage,
    stats: LedgerStats,
    ids: { site: string; agent: string },
    now: () => number,
  ): EpochDocs {
    const current = storage.latestEpoch();
    if (current !== null) return new EpochDocs(storage, stats, current);
    const docs: EpochDocs = new EpochDocs(storage, stats, 1, () => {
      const doc = newEpochDoc(ids.site, ids.agent, 1);
      const { row: _row, ...writes } = startEpoch(1, doc, now());
      if (storage.commitFirst(writes)) {
        stats.commits++;
        return { epoch: 1, doc };
      }
      // Another process started it first (`status` while the daemon starts): its latest one, loaded.
      A.free(doc);
      const epoch = storage.latestEpoch() ?? 1;
      return { epoch, doc: docs.load(epoch) };
    });
    return docs;
  }

  /** The current epoch's document, loaded or started at the first use. */
  get doc(): AgentAutomergeDoc {
    if (this.held) return this.held;
    if (this.start) {
      const first = this.start();
      this.epoch = first.epoch;
      this.held = first.doc;
    } else this.held = this.load(this.epoch);
    return this.held;
  }

  /** On a fresh store, starts epoch 1 now (a stored epoch is not loaded: the caller loads what it reads). */
  startIfFresh(): void {
    if (this.start && !this.held) void this.doc;
  }

  set doc(doc: AgentAutomergeDoc) {
    this.held = doc;
  }

  /** Whether the current document is in memory yet. */
  get open(): boolean {
    return this.held !== undefined;
  }

  /** The current document's facts as plain data, so recording never reads them back through proxies. */
  get facts(): Record<string, unknown> | null {
    if (this.plain === undefined) this.plain = plainFacts(this.doc);
    return this.plain;
  }

  set facts(facts: Record<string, unknown> | null) {
    this.plain = facts;
  }

  /**
   * Loads an epoch's document: its snapshot (the first chunk, compaction keeps it so), then the
   * incremental chunks written since. The caller owns the result: free it with `A.free` when done.
   */
  load(epoch: number): AgentAutomergeDoc {
    const [first, ...rest] = this.storage.chunks(epoch);
    if (!first) throw new StoreOpenError(`epoch ${epoch} has no stored document (the store is damaged)`);
    // load + loadIncremental: a snapshot with 16 chunks appended loads about twice as fast this way as
    // one A.load of the concatenation.
    const doc = A.load<StoredAgentDoc>(first);
    this.stats.docsLoaded++;
    return rest.length === 0 ? doc : A.loadIncremental(doc, concat(rest));
  }

  /** Runs `fn` on an epoch's document, loading (and freeing afterwards) any but the current one. */
  with<T>(epoch: number, fn: (doc: AgentAutomergeDoc) => T): T {
    if (epoch === this.epoch) return fn(this.doc);
    const doc = this.load(epoch);
    this.stats.docsHeld++;
    try {
      return fn(doc);
    } finally {
      this.release(doc);
    }
  }

  /** Frees a document the ledger loaded or replaced and no longer needs. */
  release(doc: AgentAutomergeDoc): void {
    A.free(doc);
    this.stats.docsHeld--;
  }

  /** A document the ledger made itself (a new epoch's) is held from now on. */
  adopt(): void {
    this.stats.docsHeld++;
  }

  /**
   * After a failed commit: drops the advanced document and rebuilds the current one from storage.
   * Automerge lets a document state have one successor, so the advanced one is unusable.
   */
  reload(advanced: AgentAutomergeDoc): void {
    this.release(advanced);
    this.held = this.load(this.epoch);
    this.stats.docsHeld++;
    this.plain = undefined;
  }
}
