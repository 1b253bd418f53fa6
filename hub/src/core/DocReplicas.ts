import * as A from '@automerge/automerge';
import type { AgentDoc } from '@driftline/protocol';
import type { HubStore } from '../ports/HubStore.js';

/**
 * The hub's replicas of agent documents, one per epoch, rebuilt from stored chunks and kept in an
 * LRU of bounded size. Stored chunks and materialised tables are committed together, so a replica
 * loaded from the store always matches what has been materialised.
 */
export class DocReplicas {
  private readonly docs = new Map<string, A.Doc<AgentDoc>>();
  private readonly chunkCounts = new Map<string, number>();

  constructor(
    private readonly store: HubStore,
    private readonly max = 5000,
  ) {}

  async get(docId: string): Promise<A.Doc<AgentDoc>> {
    const hit = this.docs.get(docId);
    if (hit) {
      this.docs.delete(docId);
      this.docs.set(docId, hit);
      return hit;
    }
    const chunks = await this.store.docChunks(docId);
    let doc = A.init<AgentDoc>();
    for (const c of chunks) doc = A.loadIncremental(doc, c);
    this.chunkCounts.set(docId, chunks.length);
    this.put(docId, doc);
    return doc;
  }

  put(docId: string, doc: A.Doc<AgentDoc>): void {
    this.docs.delete(docId);
    this.docs.set(docId, doc);
    while (this.docs.size > this.max) {
      const oldest = this.docs.keys().next().value as string;
      this.docs.delete(oldest);
      this.chunkCounts.delete(oldest);
    }
  }

  /** Forgets a replica (after a refused merge) so the next use reloads what is committed. */
  evict(docId: string): void {
    this.docs.delete(docId);
    this.chunkCounts.delete(docId);
  }

  /** Counts a committed chunk; returns true when the document is due for compaction. */
  noteChunk(docId: string, every: number): boolean {
    const n = (this.chunkCounts.get(docId) ?? 0) + 1;
    this.chunkCounts.set(docId, n);
    return n >= every;
  }

  /** Compacts stored chunks to one `save()`, unless changes are still waiting for dependencies. */
  async compact(docId: string): Promise<boolean> {
    const doc = this.docs.get(docId);
    if (!doc || A.getMissingDeps(doc, []).length > 0) return false;
    await this.store.compactDoc(docId, A.save(doc));
    this.chunkCounts.set(docId, 1);
    return true;
  }
}
