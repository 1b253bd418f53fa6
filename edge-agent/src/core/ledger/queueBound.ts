import type {
  AgentWriteSet,
  BlobInfo,
  BlobStorage,
  EpochStorage,
  SyncStorage,
} from '../../ports/AgentStorage.js';

/** Detail blobs the bound may drop: of results without a failure (a failure record is never dropped). */
export const DROPPABLE_STATUSES = ['clean', 'changes', 'drift'] as const;

/** The counter every drop adds to; `status` shows it. */
export const DROPPED_BLOBS = 'dropped_blobs';

/** Bytes queued: unpruned documents plus blob bytes still held. */
export function queueBytes(storage: BlobStorage & EpochStorage & Pick<SyncStorage, 'counter'>): number {
  return storage.epochs('unpruned').reduce((n, e) => n + e.bytes, 0) + storage.blobTotals(false).bytes;
}

/**
 * D5: when the queue would pass `maxBytes` once `w` is committed, adds to `w` the dropping of detail
 * blobs, clean results' first, oldest first, until it fits; results themselves (in the document) and
 * failure records are never dropped. Every drop is counted. Returns the queue's bytes after `w`.
 */
export function enforceQueueBound(
  storage: BlobStorage & EpochStorage & Pick<SyncStorage, 'counter'>,
  w: AgentWriteSet,
  maxBytes: number,
  now: number,
): number {
  const epochs = new Map(storage.epochs('unpruned').map((e) => [e.epoch, e]));
  for (const e of w.epochs ?? []) epochs.set(e.epoch, e);
  const fresh = new Map((w.blobs ?? []).filter((b) => !storage.blob(b.sha256)).map((b) => [b.sha256, b]));
  let queue =
    [...epochs.values()].reduce((n, e) => n + (e.prunedAt === null ? e.bytes : 0), 0) +
    storage.blobTotals(false).bytes +
    [...fresh.values()].reduce((n, b) => n + (b.data ? b.size : 0), 0);
  let over = queue - maxBytes;
  if (over <= 0) return queue;
  const droppable: readonly string[] = DROPPABLE_STATUSES;
  const candidates: Array<Pick<BlobInfo, 'sha256' | 'size' | 'status' | 'createdAt'>> = [
    ...storage.heldBlobs(DROPPABLE_STATUSES),
    ...[...fresh.values()].filter((b) => b.data && droppable.includes(b.status)),
  ];
  // Clean results' detail first (nothing to act on), then the rest; oldest first within each (stable sort).
  candidates.sort(
    (a, b) => Number(a.status !== 'clean') - Number(b.status !== 'clean') || a.createdAt - b.createdAt,
  );
  const drops: string[] = [];
  for (const c of candidates) {
    if (over <= 0) break;
    drops.push(c.sha256);
    over -= c.size;
    queue -= c.size;
  }
  if (drops.length === 0) return queue;
  w.blobUpdates = [
    ...(w.blobUpdates ?? []),
    ...drops.map((sha256) => ({ sha256, data: null, droppedAt: now, status: 'dropped' })),
  ];
  w.counters = { ...w.counters, [DROPPED_BLOBS]: storage.counter(DROPPED_BLOBS) + drops.length };
  return queue;
}
