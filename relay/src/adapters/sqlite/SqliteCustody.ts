import { openWalDatabase } from '@driftline/hop/sqlite';
import { formatClock, PRIORITIES, type Priority, parseClock } from '@driftline/protocol';
import type Database from 'better-sqlite3';
import {
  type AcceptOutcome,
  type Custody,
  checkQuota,
  type ExpiredReport,
  type IncomingBundle,
  OutOfSpace,
  type PeerQuota,
  type QueuedBundle,
  type StorageUsage,
} from '../../ports/Custody.js';
import { prepared } from './prepared.js';
import { SqliteBlobs } from './SqliteBlobs.js';
import { bundleHash, migrate } from './schema.js';

type Db = Database.Database;

/** Longest a relay remembers a bundle it took, for deduplication, whatever its lifetime says. */
export const SEEN_MAX_MS = 45 * 86_400_000;
/**
 * SQLite's page cache for the custody file, KiB. better-sqlite3 builds SQLite with 16 MB per connection,
 * which bundles of 64 KiB passing through fill in seconds; each is written once and read once when
 * forwarded, so a bigger cache buys nothing the OS page cache does not already give.
 */
export const CUSTODY_CACHE_KIB = 4096;
/**
 * Custody in one SQLite file: WAL with `synchronous=FULL`, so a committed receipt survives power loss
 * (D1). `maxBytes` caps everything the relay keeps on disk: this file, the blobs in custody,
 * publications and the bytes in-progress uploads reserved (`externalBytes`). Before each write the file is
 * allowed what the others leave (`max_page_count`); past it SQLite answers SQLITE_FULL, the transaction
 * rolls back, and `OutOfSpace` is thrown: nothing half-written. A real full disk gives the same error.
 */
export class SqliteCustody implements Custody {
  readonly db: Db;
  readonly blobs: SqliteBlobs;
  /** Bytes kept outside this file and its blobs that count against `maxBytes` (in-progress uploads). */
  externalBytes: () => number = () => 0;
  /** `storage.maxBytes`, when set. */
  readonly maxBytes: number | undefined;
  private readonly pageSize: number;

  constructor(path: string, opts: { maxBytes?: number } = {}) {
    this.db = openWalDatabase(path, { synchronous: 'FULL' });
    this.db.pragma(`cache_size = -${CUSTODY_CACHE_KIB}`);
    migrate(this.db);
    this.maxBytes = opts.maxBytes;
    this.pageSize = this.db.pragma('page_size', { simple: true }) as number;
    this.blobs = new SqliteBlobs(
      this.db,
      (fn) => this.tx(fn),
      (name, by) => this.count(name, by),
    );
  }

  /** What counts against `storage.maxBytes`, in bytes. */
  usage(): StorageUsage {
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const dbBytes = pages * this.pageSize;
    const blobBytes = this.blobs.bytes();
    const externalBytes = this.externalBytes();
    return { dbBytes, blobBytes, externalBytes, total: dbBytes + blobBytes + externalBytes };
  }

  /** Bytes left under `storage.maxBytes` (Infinity without a cap). */
  freeBytes(): number {
    return this.maxBytes ? this.maxBytes - this.usage().total : Number.POSITIVE_INFINITY;
  }

  private capFile(): void {
    if (!this.maxBytes) return;
    const other = this.blobs.bytes() + this.externalBytes();
    // SQLite keeps the file at its current size when the cap is below it: every write that grows it fails.
    const pages = Math.max(8, Math.floor((this.maxBytes - other) / this.pageSize));
    this.db.pragma(`max_page_count = ${pages}`);
  }

  private tx<T>(fn: () => T): T {
    try {
      this.capFile();
      return this.db.transaction(fn).immediate();
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'SQLITE_FULL') throw new OutOfSpace('the relay store is full');
      throw e;
    }
  }

  accept(from: string, items: readonly IncomingBundle[], now: number, quota?: PeerQuota): AcceptOutcome[] {
    const seen = prepared(this.db, 'SELECT 1 FROM seen WHERE id = ? AND sha256 = ?');
    const addSeen = prepared(this.db, 'INSERT INTO seen (id, sha256, expires_at) VALUES (?, ?, ?)');
    const up = prepared(
      this.db,
      `INSERT INTO uplink (id, sha256, rank, dest, kind, size, received_at, expires_at, from_peer, bytes, source, clock)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return this.tx(() => {
      const out = items.map((b): AcceptOutcome => {
        // Only the relay's own pulls fill a site's downlink (storeDownlink); the caller refuses the rest.
        if (b.dest !== 'hub')
          throw new Error(`custody takes only uplink bundles from peers, not for '${b.dest}'`);
        const sha = bundleHash(b.bytes);
        if (seen.get(b.id, sha)) return 'duplicate';
        if (b.expiresAt <= now) {
          this.count('expired_on_arrival', 1);
          return 'expired';
        }
        // The sender chooses the lifetime; the dedup memory of it is bounded, so a peer cannot grow
        // `seen` without end. A copy arriving later still converges: the hub deduplicates too (D2).
        addSeen.run(b.id, sha, Math.min(b.expiresAt, now + SEEN_MAX_MS));
        up.run(
          b.id,
          sha,
          PRIORITIES.indexOf(b.priority),
          b.dest,
          b.kind,
          b.bytes.length,
          now,
          b.expiresAt,
          from,
          b.bytes,
          b.source ?? null,
          b.clock ? formatClock(b.clock) : null,
        );
        return 'stored';
      });
      if (quota && out.includes('stored')) checkQuota(from, this.held(from), quota);
      return out;
    });
  }

  /** What `peer` holds here: uplink bundles, and their bytes plus its blobs in custody. */
  held(peer: string): { bundles: number; bytes: number } {
    const r = prepared(
      this.db,
      'SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS b FROM uplink WHERE from_peer = ?',
    ).get(peer) as { n: number; b: number };
    return { bundles: r.n, bytes: r.b + this.blobs.peerBytes(peer) };
  }

  /** Held per peer, for metrics. */
  heldByPeer(): { peer: string; bundles: number; bytes: number }[] {
    return (
      prepared(
        this.db,
        `SELECT peer, SUM(n) AS n, SUM(b) AS b FROM (
             SELECT from_peer AS peer, COUNT(*) AS n, SUM(size) AS b FROM uplink GROUP BY from_peer
             UNION ALL SELECT from_peer, 0, SUM(size) FROM blobs GROUP BY from_peer)
           GROUP BY peer`,
      ).all() as { peer: string; n: number; b: number }[]
    ).map((r) => ({ peer: r.peer, bundles: r.n, bytes: r.b }));
  }

  nextBatch(now: number, maxBytes: number, maxCount: number): QueuedBundle[] {
    // Iterated, not `all()`: rows past the byte budget are never read (500 rows of 64 KiB bundles
    // would be 32 MB read to send 1 MiB).
    const rows = prepared(
      this.db,
      `SELECT seq, id, dest, rank, size, received_at, bytes, source, clock FROM uplink
         WHERE expires_at > ? ORDER BY rank, seq LIMIT ?`,
    ).iterate(now, maxCount) as IterableIterator<{
      seq: number;
      id: string;
      dest: string;
      rank: number;
      size: number;
      received_at: number;
      bytes: Buffer;
      source: string | null;
      clock: string | null;
    }>;
    const out: QueuedBundle[] = [];
    let total = 0;
    for (const r of rows) {
      if (out.length > 0 && total + r.size > maxBytes) break;
      total += r.size;
      out.push({
        seq: r.seq,
        id: r.id,
        dest: r.dest,
        priority: PRIORITIES[r.rank] as Priority,
        size: r.size,
        receivedAt: r.received_at,
        bytes: new Uint8Array(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength),
        source: r.source,
        clock: parseClock(r.clock),
      });
    }
    return out;
  }

  forwarded(seqs: readonly number[]): void {
    const del = prepared(this.db, 'DELETE FROM uplink WHERE seq = ?');
    this.tx(() => {
      for (const seq of seqs) del.run(seq);
      this.count('forwarded', seqs.length);
    });
  }

  refused(seqs: readonly number[]): void {
    const del = prepared(this.db, 'DELETE FROM uplink WHERE seq = ?');
    this.tx(() => {
      for (const seq of seqs) del.run(seq);
      this.count('refused_upstream', seqs.length);
    });
  }

  expire(now: number): ExpiredReport {
    return this.tx(() => {
      const pick = (table: string, destCol: string) =>
        (
          prepared(
            this.db,
            `DELETE FROM ${table} WHERE expires_at <= ? RETURNING id, ${destCol} AS dest, rank`,
          ).all(now) as { id: string; dest: string; rank: number }[]
        ).map((r) => ({ id: r.id, dest: r.dest, priority: PRIORITIES[r.rank] as Priority }));
      const report = { uplink: pick('uplink', 'dest'), downlink: pick('downlink', 'site') };
      this.count('expired_uplink', report.uplink.length);
      this.count('expired_downlink', report.downlink.length);
      // ids of expired bundles are kept a day longer: a late copy is then refused as expired, not re-queued
      prepared(this.db, 'DELETE FROM seen WHERE expires_at <= ?').run(now - 86_400_000);
      prepared(this.db, 'DELETE FROM downlink_seen WHERE expires_at <= ?').run(now - 86_400_000);
      return report;
    });
  }

  downlink(site: string, after: number, limit: number): { bundles: Uint8Array[]; cursor: number } {
    return this.tx(() => {
      if (after > 0) prepared(this.db, 'DELETE FROM downlink WHERE site = ? AND seq <= ?').run(site, after);
      const rows = prepared(
        this.db,
        'SELECT seq, bytes FROM downlink WHERE site = ? AND seq > ? ORDER BY seq LIMIT ?',
      ).all(site, after, limit) as { seq: number; bytes: Buffer }[];
      const last = rows.at(-1);
      return {
        bundles: rows.map((r) => new Uint8Array(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength)),
        cursor: last ? last.seq : after,
      };
    });
  }

  storeDownlink(
    upstream: string,
    site: string,
    items: readonly IncomingBundle[],
    cursor: string,
    now: number,
  ): { conflicts: string[] } {
    const seen = prepared(
      this.db,
      'INSERT OR IGNORE INTO downlink_seen (site, id, sha256, expires_at) VALUES (?, ?, ?, ?)',
    );
    const other = prepared(
      this.db,
      'SELECT 1 FROM downlink_seen WHERE site = ? AND id = ? AND sha256 != ? LIMIT 1',
    );
    const down = prepared(
      this.db,
      `INSERT INTO downlink (id, sha256, site, rank, size, received_at, expires_at, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const conflicts: string[] = [];
    return this.tx(() => {
      for (const b of items) {
        if (b.expiresAt <= now) {
          this.count('expired_on_arrival', 1);
          continue;
        }
        const sha = bundleHash(b.bytes);
        // Kept as long as the bundle lives, capped like the uplink's (SEEN_MAX_MS).
        if (seen.run(site, b.id, sha, Math.min(b.expiresAt, now + SEEN_MAX_MS)).changes === 0) continue;
        if (other.get(site, b.id, sha)) conflicts.push(b.id);
        down.run(b.id, sha, site, PRIORITIES.indexOf(b.priority), b.bytes.length, now, b.expiresAt, b.bytes);
      }
      prepared(
        this.db,
        'INSERT INTO cursors (upstream, site, cursor) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET cursor = excluded.cursor',
      ).run(upstream, site, cursor);
      this.count('downlink_conflicts', conflicts.length);
      return { conflicts };
    });
  }

  upstreamCursor(upstream: string, site: string): string | undefined {
    const r = prepared(this.db, 'SELECT cursor FROM cursors WHERE upstream = ? AND site = ?').get(
      upstream,
      site,
    ) as { cursor: string } | undefined;
    return r?.cursor;
  }

  addSent(keys: readonly string[], bytes: number): void {
    const up = prepared(
      this.db,
      'INSERT INTO sent (key, bytes) VALUES (?, ?) ON CONFLICT DO UPDATE SET bytes = bytes + excluded.bytes',
    );
    this.tx(() => {
      for (const k of keys) up.run(k, bytes);
    });
  }

  sent(key: string): number {
    return (
      (prepared(this.db, 'SELECT bytes FROM sent WHERE key = ?').get(key) as { bytes: number } | undefined)
        ?.bytes ?? 0
    );
  }

  counter(name: string): number {
    return (
      (
        prepared(this.db, 'SELECT value FROM counters WHERE name = ?').get(name) as
          | { value: number }
          | undefined
      )?.value ?? 0
    );
  }

  count(name: string, by: number): void {
    if (by === 0) return;
    prepared(
      this.db,
      'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT DO UPDATE SET value = value + excluded.value',
    ).run(name, by);
  }

  queueStats(now: number): { dest: string; priority: Priority; count: number; oldestMs: number }[] {
    const rows = prepared(
      this.db,
      `SELECT dest, rank, COUNT(*) AS n, MIN(received_at) AS oldest FROM uplink GROUP BY dest, rank
         UNION ALL
         SELECT site, rank, COUNT(*), MIN(received_at) FROM downlink GROUP BY site, rank`,
    ).all() as { dest: string; rank: number; n: number; oldest: number }[];
    return rows.map((r) => ({
      dest: r.dest,
      priority: PRIORITIES[r.rank] as Priority,
      count: r.n,
      oldestMs: now - r.oldest,
    }));
  }

  close(): void {
    this.db.close();
  }
}
