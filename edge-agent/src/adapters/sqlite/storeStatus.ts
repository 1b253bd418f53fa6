import type Database from 'better-sqlite3';
import type { AgentRejection, StoreStatus } from '../../ports/AgentStore.js';

export function readStatus(
  db: Database.Database,
  base: {
    site: string;
    agent: string;
    epoch: number;
    maxQueueBytes: number;
    queueBytes: number;
    /** Bytes of document changes the hub has not acknowledged (what the next pushes carry). */
    pendingChangeBytes: number;
    rejections: AgentRejection[];
  },
): StoreStatus {
  const runs = db
    .prepare('SELECT count(*) AS n, min(finished_at) AS oldest FROM runs WHERE acked_at IS NULL')
    .get() as {
    n: number;
    oldest: number | null;
  };
  const docBytes = (
    db.prepare('SELECT bytes FROM epochs WHERE epoch = ?').get(base.epoch) as { bytes: number }
  ).bytes;
  const blobs = db
    .prepare(
      'SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM blobs WHERE data IS NOT NULL AND acked_at IS NULL',
    )
    .get() as { n: number; bytes: number };

  const push = db
    .prepare('SELECT created_at, upstream, receipt FROM pushes ORDER BY created_at DESC LIMIT 1')
    .get() as { created_at: number; upstream: string | null; receipt: string | null } | undefined;
  const failure = db
    .prepare('SELECT url, last_error_at, last_error FROM upstreams ORDER BY last_error_at DESC LIMIT 1')
    .get() as { url: string; last_error_at: number | null; last_error: string | null } | undefined;
  let lastPush: StoreStatus['lastPush'] = push
    ? {
        at: push.created_at,
        ok: push.receipt === 'stored' || push.receipt === 'duplicate',
        upstream: push.upstream,
        detail: push.receipt,
      }
    : null;
  if (failure?.last_error_at && (!lastPush || failure.last_error_at > lastPush.at)) {
    lastPush = { at: failure.last_error_at, ok: false, upstream: failure.url, detail: failure.last_error };
  }
  const ack = db.prepare('SELECT max(acked_at) AS at FROM epochs').get() as { at: number | null };
  const dropped = db.prepare("SELECT value FROM counters WHERE name = 'dropped_blobs'").get() as
    | { value: number }
    | undefined;
  const upstreams = db.prepare('SELECT * FROM upstreams ORDER BY url').all() as Array<{
    url: string;
    last_ok_at: number | null;
    last_error_at: number | null;
    last_error: string | null;
    consecutive_failures: number;
  }>;
  return {
    site: base.site,
    agent: base.agent,
    epoch: base.epoch,
    docBytes,
    unackedRuns: runs.n,
    oldestUnackedAt: runs.oldest,
    bytesPending: base.pendingChangeBytes + blobs.bytes,
    blobsPending: blobs.n,
    lastPush,
    lastAckAt: ack.at,
    rejections: base.rejections,
    queueBytes: base.queueBytes,
    maxQueueBytes: base.maxQueueBytes,
    boundInForce: base.queueBytes >= base.maxQueueBytes || (dropped?.value ?? 0) > 0,
    dropped: { blobs: dropped?.value ?? 0 },
    upstreams: upstreams.map((u) => ({
      url: u.url,
      lastOkAt: u.last_ok_at,
      lastErrorAt: u.last_error_at,
      lastError: u.last_error,
      consecutiveFailures: u.consecutive_failures,
    })),
  };
}
