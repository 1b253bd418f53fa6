import * as A from '@automerge/automerge';
import type { AgentDoc } from '@driftline/protocol';
import type { HubStore } from '../ports/HubStore.js';
import type { Backend } from './DocReader.js';
import type { HeapHeadroom } from './HeapHeadroom.js';

interface Replica {
  /** The document whose handle holds the replica. Its JS view is not kept current: read through `handle`. */
  doc: A.Doc<unknown>;
  handle: Backend;
  chunks: number;
  /** Operations held (Automerge's own count), for the memory bound. */
  ops: number;
  /** A materialised view handed out by `get`, valid while the heads are unchanged. */
  view?: { heads: string; doc: A.Doc<AgentDoc> };
  /** Set once a view was handed out: someone may still read it, so eviction leaves freeing to the GC. */
  shared: boolean;
  /** What readers keep between batches (DocReader's memo); dropped with the replica. */
  memo: Map<string, unknown>;
}

/**
 * The hub's replicas of agent documents, one per epoch, rebuilt from stored chunks and kept in an
 * LRU bounded by count and by operations held. Stored chunks and materialised tables are committed
 * together, so a replica loaded from the store always matches what has been materialised.
 *
 * Ingest merges through Automerge's handle (`handle()`) and never materialises a whole document in
 * JS: that was most of the merge cost and memory. `get()` gives other readers a materialised view.
 */
export class DocReplicas {
  private readonly docs = new Map<string, Replica>();
  private totalOps = 0;

  constructor(
    private readonly store: HubStore,
    private readonly max = 5000,
    /** Operations held across all replicas before the least recently used are dropped. */
    private readonly maxOps = 40_000_000,
    /** Makes room in Automerge's heap between batches (see HeapHeadroom); none in tests. */
    private readonly headroom?: HeapHeadroom,
  ) {}

  /** The replica's handle, loaded from stored chunks on a miss (in one load of all chunks). */
  async handle(docId: string): Promise<Backend> {
    return (await this.replica(docId)).handle;
  }

  /** The replica's memo for DocReader (a fresh one when the replica is not held). */
  memo(docId: string): Map<string, unknown> {
    return this.docs.get(docId)?.memo ?? new Map();
  }

  /** The document as a read-only materialised view at its current heads. */
  async get(docId: string): Promise<A.Doc<AgentDoc>> {
    const r = await this.replica(docId);
    const heads = r.handle.getHeads().join(',');
    if (r.view?.heads !== heads)
      r.view = { heads, doc: A.view(r.doc, r.handle.getHeads()) as A.Doc<AgentDoc> };
    r.shared = true;
    return r.view.doc;
  }

  private async replica(docId: string): Promise<Replica> {
    const hit = this.docs.get(docId);
    if (hit) {
      this.docs.delete(docId);
      this.docs.set(docId, hit);
      return hit;
    }
    const chunks = await this.store.docChunks(docId);
    const doc = A.init<unknown>();
    const handle = A.getBackend(doc);
    if (chunks.length > 0) handle.loadIncremental(concat(chunks));
    const r: Replica = { doc, handle, chunks: chunks.length, ops: 0, shared: false, memo: new Map() };
    this.docs.set(docId, r);
    this.recount(r);
    return r;
  }

  private recount(r: Replica): void {
    const ops = r.handle.stats().numOps;
    this.totalOps += ops - r.ops;
    r.ops = ops;
  }

  /**
   * Re-counts the replicas a committed batch merged into, then drops least recently used replicas past
   * the bounds. Ingest calls it after its commit, never in the middle of a batch.
   */
  settle(docIds: Iterable<string>): void {
    this.headroom?.check();
    for (const id of docIds) {
      const r = this.docs.get(id);
      if (r) this.recount(r);
    }
    for (const [oldest] of this.docs) {
      if (this.docs.size <= this.max && this.totalOps <= this.maxOps) break;
      this.evict(oldest);
    }
    // Automerge's heap never shrinks and ends at 4 GiB (wasm32), where a failed allocation kills the
    // module. Past the headroom's limit, a quarter of the replicas (least recently used) are dropped:
    // their memory is reused by the next merges and reloads, so the heap stops growing.
    // Only when it grew again since: freed memory is reused first.
    const heap = this.headroom?.size() ?? 0;
    if (this.headroom && heap > this.headroom.limit && heap > this.heapSeen) {
      let drop = Math.ceil(this.docs.size / 4);
      for (const [oldest] of this.docs) {
        if (drop-- <= 0) break;
        this.evict(oldest);
      }
    }
    this.heapSeen = Math.max(this.heapSeen, heap);
  }

  /** The largest heap size `settle` has seen. */
  private heapSeen = 0;

  /** Forgets a replica (after a refused merge) so the next use reloads what is committed. */
  evict(docId: string): void {
    const r = this.docs.get(docId);
    if (!r) return;
    this.docs.delete(docId);
    this.totalOps -= r.ops;
    // Free the WebAssembly memory now unless a view may still be in use (then the GC frees it).
    if (!r.shared) A.free(r.doc);
  }

  /** How many replicas and operations are held (for metrics and the benchmark). */
  size(): { docs: number; ops: number } {
    return { docs: this.docs.size, ops: this.totalOps };
  }

  /** Counts a committed chunk; returns true when the document is due for compaction. */
  noteChunk(docId: string, every: number): boolean {
    const r = this.docs.get(docId);
    if (!r) return false;
    r.chunks += 1;
    return r.chunks >= every;
  }

  /** Compacts stored chunks to one `save()`, unless changes are still waiting for dependencies. */
  async compact(docId: string): Promise<boolean> {
    const r = this.docs.get(docId);
    if (!r || r.handle.getMissingDeps([]).length > 0) return false;
    await this.store.compactDoc(docId, r.handle.save());
    r.chunks = 1;
    return true;
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
