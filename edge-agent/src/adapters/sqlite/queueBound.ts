import type Database from 'better-sqlite3';

/** Bytes queued on disk: unpruned documents plus blob bytes still held. */
export function queueBytes(db: Database.Database): number {
  const docs = db
    .prepare('SELECT coalesce(sum(bytes), 0) AS n FROM epochs WHERE pruned_at IS NULL')
    .get() as { n: number };
  const blobs = db.prepare('SELECT coalesce(sum(size), 0) AS n FROM blobs WHERE data IS NOT NULL').get() as {
    n: number;
  };
  return docs.n + blobs.n;
}

/**
 * D5: when the queue passes its bound, detail blobs are dropped, oldest first, clean results before
 * changes and drift; results themselves (in the document) and failure records are never dropped.
 * Every drop is counted (`counters.dropped_blobs`) and shows in `status`.
 * Returns how many blobs were dropped now.
 */
export function enforceQueueBound(db: Database.Database, maxBytes: number, now: number): number {
  let over = queueBytes(db) - maxBytes;
  if (over <= 0) return 0;
  const candidates = db
    .prepare(
      `SELECT sha256, size FROM blobs
       WHERE data IS NOT NULL AND status IN ('clean', 'changes', 'drift')
       ORDER BY CASE status WHEN 'clean' THEN 0 ELSE 1 END, created_at`,
    )
    .all() as Array<{ sha256: string; size: number }>;
  const drop = db.prepare(
    "UPDATE blobs SET data = NULL, dropped_at = ?, status = 'dropped' WHERE sha256 = ?",
  );
  let dropped = 0;
  for (const c of candidates) {
    if (over <= 0) break;
    drop.run(now, c.sha256);
    over -= c.size;
    dropped++;
  }
  if (dropped > 0) {
    db.prepare(
      "INSERT INTO counters (name, value) VALUES ('dropped_blobs', ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
    ).run(dropped);
  }
  return dropped;
}
