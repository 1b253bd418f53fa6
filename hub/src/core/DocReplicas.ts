import type { wire2 } from '@driftline/protocol';
import type { IngestStore } from '../ports/HubStore.js';
import type { Merger, ThreadMemory } from '../ports/Merger.js';
import type { HeapHeadroom } from './HeapHeadroom.js';
import { inThread } from './inThread.js';
import { loadStored, type MergeOutput } from './mergeDoc.js';

export interface DocReplicasOptions {
  /** Merges documents: in worker threads (MergePool) or, by default, in this thread. */
  merger?: Merger;
  /** Makes room in this thread's Automerge heap between batches (see HeapHeadroom); none in tests. */
  headroom?: HeapHeadroom;
  /** Store the whole document once it would otherwise have more stored chunks than this. */
  maxChunks?: number;
  /** … or once the chunks after the first add up to more than this share of the first. */
  maxGrowth?: number;
  /** Documents whose memo is kept (least recently used dropped). */
  maxMemos?: number;
  /**
   * Other hub processes merge into the same store (PostgreSQL): a document may have changed since this
   * one last merged it, so the memo is not relied on (the cadences are read from the document each time).
   */
  shared?: boolean;
}

/**
 * The hub's replicas of agent documents, one per epoch. A replica lives for one merge only
 * (`mergeDoc`): loaded from the stored chunks, merged, read, stored, freed, before the batch commits.
 *
 * Why nothing is held between batches (decision 009): Automerge 3.5's first merge of changes into a
 * loaded document allocates several MB per 200 entries that stay with the replica, so 1,000 agents'
 * held replicas passed wasm32's 4 GiB heap and killed the module. A replica loaded from a whole
 * `save()` is cheap to build (a few ms) and, freed right after, leaves the heap flat. Stored
 * documents are therefore kept compact: a merge that grew a document enough stores its `save()` in
 * place of its chunks, in the batch's own transaction.
 */
export class DocReplicas {
  private readonly memos = new Map<string, Map<string, unknown>>();
  private readonly merger: Merger;

  constructor(
    private readonly store: Pick<IngestStore, 'docChunks'>,
    private readonly opts: DocReplicasOptions = {},
  ) {
    this.merger = opts.merger ?? inThread;
  }

  /**
   * Merges one document's bundles (their changes, in order) into its stored state. `memo` is what
   * readers keep for the document between batches (the declared cadences, see DocReader).
   */
  async merge(
    docId: string,
    site: string,
    agent: string,
    changes: Uint8Array[],
    heartbeats: (wire2.HeartbeatBody | null)[] = [],
    /** A bundle is a v2 push (its ack says whether the hub rebuilds heartbeats). */
    v2 = false,
  ): Promise<{ out: MergeOutput; memo: Map<string, unknown> }> {
    const memo = this.memo(docId);
    const out = await this.merger.merge({
      docId,
      site,
      agent,
      stored: await this.store.docChunks(docId),
      changes,
      ...(heartbeats.some((h) => h) ? { heartbeats } : {}),
      ...(v2 ? { wire2: true } : {}),
      cadenceKnown: !this.opts.shared && memo.has('cadenceS'),
      maxChunks: this.opts.maxChunks ?? 8,
      maxGrowth: this.opts.maxGrowth ?? 0.25,
    });
    return { out, memo };
  }

  /** The document's committed heads. */
  async heads(docId: string): Promise<string[]> {
    const h = loadStored(await this.store.docChunks(docId));
    try {
      return h.getHeads();
    } finally {
      h.free();
    }
  }

  /** Forgets what readers kept for these documents (after a batch failed to commit). */
  forget(docIds: Iterable<string>): void {
    for (const id of docIds) this.memos.delete(id);
  }

  /** Call between batches: keeps room in this thread's Automerge heap (see HeapHeadroom). */
  settle(): void {
    this.opts.headroom?.check();
  }

  /** The merge workers' memory (none when merging in this thread). */
  async mergerMemory(): Promise<ThreadMemory[]> {
    return (await this.merger.memory?.()) ?? [];
  }

  /** Memos held (for the benchmark). */
  size(): { memos: number } {
    return { memos: this.memos.size };
  }

  async close(): Promise<void> {
    await this.merger.close();
  }

  private memo(docId: string): Map<string, unknown> {
    let m = this.memos.get(docId);
    if (m) this.memos.delete(docId);
    else m = new Map();
    this.memos.set(docId, m);
    for (const [oldest] of this.memos) {
      if (this.memos.size <= (this.opts.maxMemos ?? 20_000)) break;
      this.memos.delete(oldest);
    }
    return m;
  }
}
