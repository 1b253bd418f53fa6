import * as A from '@automerge/automerge';
import { type AgentStorage, StoreOpenError } from '../../ports/AgentStorage.js';
import { type AgentAutomergeDoc, plainFacts, type StoredAgentDoc } from '../doc/agentDoc.js';

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
 */
export class EpochDocs {
  epoch: number;
  doc: AgentAutomergeDoc;
  /** The current document's facts as plain data, so recording never reads them back through proxies. */
  facts: Record<string, unknown> | null;

  constructor(
    private readonly storage: AgentStorage,
    /** The ledger's counters: documents loaded and held are counted here. */
    readonly stats: LedgerStats,
    epoch: number,
    doc?: AgentAutomergeDoc,
  ) {
    this.epoch = epoch;
    this.doc = doc ?? this.load(epoch);
    this.facts = plainFacts(this.doc);
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
    this.doc = this.load(this.epoch);
    this.stats.docsHeld++;
    this.facts = plainFacts(this.doc);
  }
}
