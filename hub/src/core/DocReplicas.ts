import * as A from '@automerge/automerge';
import type { HubStore } from '../ports/HubStore.js';
import type { Backend } from './DocReader.js';
import type { HeapHeadroom } from './HeapHeadroom.js';

/** A replica opened for one batch: merged into, read, then closed (its WebAssembly memory freed). */
export interface OpenReplica {
  docId: string;
  handle: Backend;
  /** What readers keep between batches (DocReader's memo): outlives the replica. */
  memo: Map<string, unknown>;
  /** How the document is stored: chunks, and the bytes of the first (a whole `save()` once compacted). */
  stored: { chunks: number; baseBytes: number; restBytes: number };
}

export interface DocReplicasOptions {
  /** Makes room in Automerge's heap between batches (see HeapHeadroom); none in tests. */
  headroom?: HeapHeadroom;
  /** Store the whole document once it would otherwise have more stored chunks than this. */
  maxChunks?: number;
  /** … or once the chunks after the first add up to more than this share of the first. */
  maxGrowth?: number;
  /** Documents whose memo is kept (least recently used dropped). */
  maxMemos?: number;
}

/**
 * The hub's replicas of agent documents, one per epoch. A replica lives for one batch: Ingest opens
 * it from the stored chunks (one `loadIncremental`), merges the batch's changes, reads what changed,
 * decides how to store the result (`storeWhole`) and closes it, all before the batch commits.
 *
 * Why nothing is held between batches (decision 009): Automerge 3.5's first merge of changes into a
 * loaded document allocates several MB per 200 entries that stay with the replica, so 1,000 agents'
 * held replicas passed wasm32's 4 GiB heap and killed the module. A replica loaded from a whole
 * `save()` is cheap to build (a few ms) and, freed right after its batch, leaves the heap flat.
 * Stored documents are therefore kept compact: a batch that grew a document enough stores its
 * `save()` in place of its chunks, in the batch's own transaction.
 */
export class DocReplicas {
  private readonly memos = new Map<string, Map<string, unknown>>();
  private readonly maxChunks: number;
  private readonly maxGrowth: number;
  private readonly maxMemos: number;
  private opened = 0;

  constructor(
    private readonly store: HubStore,
    private readonly opts: DocReplicasOptions = {},
  ) {
    this.maxChunks = opts.maxChunks ?? 8;
    this.maxGrowth = opts.maxGrowth ?? 0.25;
    this.maxMemos = opts.maxMemos ?? 20_000;
  }

  /** Loads the document's committed state (all its chunks in one load). Close it when done. */
  async open(docId: string): Promise<OpenReplica> {
    const chunks = await this.store.docChunks(docId);
    const handle = A.getBackend(A.init());
    if (chunks.length > 0) handle.loadIncremental(concat(chunks));
    const baseBytes = chunks[0]?.length ?? 0;
    const restBytes = chunks.reduce((n, c) => n + c.length, 0) - baseBytes;
    this.opened++;
    return { docId, handle, memo: this.memo(docId), stored: { chunks: chunks.length, baseBytes, restBytes } };
  }

  /** Frees the replica's WebAssembly memory. The handle must not be used afterwards. */
  close(r: OpenReplica): void {
    r.handle.free();
    this.opened--;
  }

  /** The document's current heads (opened and closed again). */
  async heads(docId: string): Promise<string[]> {
    const r = await this.open(docId);
    try {
      return r.handle.getHeads();
    } finally {
      this.close(r);
    }
  }

  /**
   * Whether a batch that adds `added` (bytes in `chunks` chunks) to the replica should store the
   * whole document (`save()`) instead of appending the chunks: loading changes applies them one by
   * one (~0.5 ms each with hundreds of entries), loading a saved document does not. Never while
   * changes wait for missing dependencies (a `save()` would leave them out).
   */
  storeWhole(r: OpenReplica, added: { chunks: number; bytes: number }): boolean {
    if (r.handle.getMissingDeps([]).length > 0) return false;
    const { chunks, baseBytes, restBytes } = r.stored;
    return chunks + added.chunks > this.maxChunks || restBytes + added.bytes > baseBytes * this.maxGrowth;
  }

  /** Forgets what readers kept for these documents (after a batch failed to commit). */
  forget(docIds: Iterable<string>): void {
    for (const id of docIds) this.memos.delete(id);
  }

  /** Call between batches: keeps room in Automerge's heap (see HeapHeadroom). */
  settle(): void {
    if (this.opened === 0) this.opts.headroom?.check();
  }

  /** Replicas open now, and memos held (for metrics and the benchmark). */
  size(): { open: number; memos: number } {
    return { open: this.opened, memos: this.memos.size };
  }

  private memo(docId: string): Map<string, unknown> {
    let m = this.memos.get(docId);
    if (m) this.memos.delete(docId);
    else m = new Map();
    this.memos.set(docId, m);
    for (const [oldest] of this.memos) {
      if (this.memos.size <= this.maxMemos) break;
      this.memos.delete(oldest);
    }
    return m;
  }
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
