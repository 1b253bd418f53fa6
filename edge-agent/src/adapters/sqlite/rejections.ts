import type { RejectionPayload } from '@driftline/protocol';
import type Database from 'better-sqlite3';
import type { AgentRejection } from '../../ports/AgentStore.js';

/** The meta key holding the hub time of the newest ack: a rejection older than it is outdated. */
const HUB_ACK_AT = 'hub_ack_at';

/**
 * Records a hub rejection (in the caller's transaction): one row per code, the newest replacing the
 * one before. Every unpruned epoch forgets its relay receipt, and blobs their announcement, so the next
 * push carries everything since the hub's ack again: the relay that receipted them handed them to a hub
 * that refused them, and nothing else will send them.
 */
export function recordRejection(db: Database.Database, r: RejectionPayload, now: number): boolean {
  const ackAt = db.prepare('SELECT value FROM meta WHERE key = ?').get(HUB_ACK_AT) as
    | { value: string }
    | undefined;
  if (ackAt && r.lastAt <= Number(ackAt.value)) return false;
  db.prepare(
    `INSERT INTO rejections (code, bundle_ids, count, first_at, last_at, received_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (code) DO UPDATE SET bundle_ids = excluded.bundle_ids, count = excluded.count,
       first_at = excluded.first_at, last_at = excluded.last_at, received_at = excluded.received_at`,
  ).run(r.code, JSON.stringify(r.bundleIds), r.count, r.firstAt, r.lastAt, now);
  db.prepare(
    'UPDATE epochs SET receipted_heads = acked_heads, receipted_at = NULL, rejected_at = ? WHERE pruned_at IS NULL',
  ).run(now);
  db.prepare(
    'UPDATE blobs SET announced_at = NULL WHERE announced_at IS NOT NULL AND acked_at IS NULL AND dropped_at IS NULL',
  ).run();
  return true;
}

/** A hub ack committed at `committedAt` (hub clock): rejections up to then are outdated. */
export function ackOutdates(db: Database.Database, committedAt: number): number {
  db.prepare(
    `INSERT INTO meta (key, value) VALUES (?, ?)
     ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))`,
  ).run(HUB_ACK_AT, String(committedAt));
  return db.prepare('DELETE FROM rejections WHERE last_at <= ?').run(committedAt).changes;
}

/** The hub took one of this agent's bundles itself (its own receipt): every rejection is outdated. */
export function clearRejections(db: Database.Database): number {
  return db.prepare('DELETE FROM rejections').run().changes;
}

/** The rejections not yet outdated, newest first; each is retried `retryMs` after it arrived. */
export function readRejections(db: Database.Database, retryMs: number): AgentRejection[] {
  const rows = db.prepare('SELECT * FROM rejections ORDER BY received_at DESC, code').all() as Array<{
    code: string;
    bundle_ids: string;
    count: number;
    last_at: number;
    received_at: number;
  }>;
  return rows.map((r) => ({
    state: r.code === 'unknown-agent' ? 'waiting for enrolment' : 'rejected',
    code: r.code,
    count: r.count,
    bundleIds: JSON.parse(r.bundle_ids) as string[],
    rejectedAt: r.last_at,
    receivedAt: r.received_at,
    retryAt: r.received_at + retryMs,
  }));
}
