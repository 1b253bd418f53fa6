import { PRIORITIES, type Priority } from '@driftline/protocol';
import Database from 'better-sqlite3';
import {
  type AcceptOutcome,
  type Custody,
  type ExpiredReport,
  type IncomingBundle,
  OutOfSpace,
  type QueuedBundle,
} from '../../ports/Custody.js';
import { migrate } from './schema.js';

type Db = Database.Database;

/**
 * Custody in one SQLite file: WAL with `synchronous=FULL`, so a committed receipt survives power loss
 * (D1). `maxBytes` caps the file through `max_page_count`; past it SQLite answers SQLITE_FULL, the
 * transaction rolls back, and `OutOfSpace` is thrown: nothing half-written. A real full disk gives
 * the same error.
 */
export class SqliteCustody implements Custody {
  readonly db: Db;

  constructor(path: string, opts: { maxBytes?: number } = {}) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    migrate(this.db);
    if (opts.maxBytes) {
      const page = this.db.pragma('page_size', { simple: true }) as number;
      this.db.pragma(`max_page_count = ${Math.max(8, Math.floor(opts.maxBytes / page))}`);
    }
  }

  private tx<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn).immediate();
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'SQLITE_FULL') throw new OutOfSpace('the relay store is full');
      throw e;
    }
  }

  accept(from: string, items: readonly IncomingBundle[], now: number): AcceptOutcome[] {
    const seen = this.db.prepare('SELECT 1 FROM seen WHERE id = ?');
    const addSeen = this.db.prepare('INSERT INTO seen (id, expires_at) VALUES (?, ?)');
    const up = this.db.prepare(
      `INSERT INTO uplink (id, rank, dest, kind, size, received_at, expires_at, from_peer, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const down = this.db.prepare(
      `INSERT OR IGNORE INTO downlink (id, site, rank, size, received_at, expires_at, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    return this.tx(() =>
      items.map((b): AcceptOutcome => {
        if (seen.get(b.id)) return 'duplicate';
        if (b.expiresAt <= now) {
          this.bump('expired_on_arrival', 1);
          return 'expired';
        }
        addSeen.run(b.id, b.expiresAt);
        const rank = PRIORITIES.indexOf(b.priority);
        if (b.dest === 'hub') {
          up.run(b.id, rank, b.dest, b.kind, b.bytes.length, now, b.expiresAt, from, b.bytes);
        } else down.run(b.id, b.dest, rank, b.bytes.length, now, b.expiresAt, b.bytes);
        return 'stored';
      }),
    );
  }

  nextBatch(now: number, maxBytes: number, maxCount: number): QueuedBundle[] {
    const rows = this.db
      .prepare(
        `SELECT seq, id, dest, rank, size, received_at, bytes FROM uplink
         WHERE expires_at > ? ORDER BY rank, seq LIMIT ?`,
      )
      .all(now, maxCount) as {
      seq: number;
      id: string;
      dest: string;
      rank: number;
      size: number;
      received_at: number;
      bytes: Buffer;
    }[];
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
      });
    }
    return out;
  }

  forwarded(ids: readonly string[]): void {
    const del = this.db.prepare('DELETE FROM uplink WHERE id = ?');
    this.tx(() => {
      for (const id of ids) del.run(id);
      this.bump('forwarded', ids.length);
    });
  }

  refused(ids: readonly string[]): void {
    const del = this.db.prepare('DELETE FROM uplink WHERE id = ?');
    this.tx(() => {
      for (const id of ids) del.run(id);
      this.bump('refused_upstream', ids.length);
    });
  }

  expire(now: number): ExpiredReport {
    return this.tx(() => {
      const pick = (table: string, destCol: string) =>
        (
          this.db
            .prepare(`DELETE FROM ${table} WHERE expires_at <= ? RETURNING id, ${destCol} AS dest, rank`)
            .all(now) as { id: string; dest: string; rank: number }[]
        ).map((r) => ({ id: r.id, dest: r.dest, priority: PRIORITIES[r.rank] as Priority }));
      const report = { uplink: pick('uplink', 'dest'), downlink: pick('downlink', 'site') };
      this.bump('expired_uplink', report.uplink.length);
      this.bump('expired_downlink', report.downlink.length);
      // ids of expired bundles are kept a day longer: a late copy is then refused as expired, not re-queued
      this.db.prepare('DELETE FROM seen WHERE expires_at <= ?').run(now - 86_400_000);
      return report;
    });
  }

  downlink(site: string, after: number, limit: number): { bundles: Uint8Array[]; cursor: number } {
    return this.tx(() => {
      if (after > 0) this.db.prepare('DELETE FROM downlink WHERE site = ? AND seq <= ?').run(site, after);
      const rows = this.db
        .prepare('SELECT seq, bytes FROM downlink WHERE site = ? AND seq > ? ORDER BY seq LIMIT ?')
        .all(site, after, limit) as { seq: number; bytes: Buffer }[];
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
  ): void {
    const down = this.db.prepare(
      `INSERT OR IGNORE INTO downlink (id, site, rank, size, received_at, expires_at, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.tx(() => {
      for (const b of items) {
        if (b.expiresAt <= now) {
          this.bump('expired_on_arrival', 1);
          continue;
        }
        down.run(b.id, site, PRIORITIES.indexOf(b.priority), b.bytes.length, now, b.expiresAt, b.bytes);
      }
      this.db
        .prepare(
          'INSERT INTO cursors (upstream, site, cursor) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET cursor = excluded.cursor',
        )
        .run(upstream, site, cursor);
    });
  }

  upstreamCursor(upstream: string, site: string): string | undefined {
    const r = this.db
      .prepare('SELECT cursor FROM cursors WHERE upstream = ? AND site = ?')
      .get(upstream, site) as { cursor: string } | undefined;
    return r?.cursor;
  }

  addSent(keys: readonly string[], bytes: number): void {
    const up = this.db.prepare(
      'INSERT INTO sent (key, bytes) VALUES (?, ?) ON CONFLICT DO UPDATE SET bytes = bytes + excluded.bytes',
    );
    this.tx(() => {
      for (const k of keys) up.run(k, bytes);
    });
  }

  sent(key: string): number {
    return (
      (this.db.prepare('SELECT bytes FROM sent WHERE key = ?').get(key) as { bytes: number } | undefined)
        ?.bytes ?? 0
    );
  }

  counter(name: string): number {
    return (
      (
        this.db.prepare('SELECT value FROM counters WHERE name = ?').get(name) as
          | { value: number }
          | undefined
      )?.value ?? 0
    );
  }

  private bump(name: string, by: number): void {
    if (by === 0) return;
    this.db
      .prepare(
        'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT DO UPDATE SET value = value + excluded.value',
      )
      .run(name, by);
  }

  queueStats(now: number): { dest: string; priority: Priority; count: number; oldestMs: number }[] {
    const rows = this.db
      .prepare(
        `SELECT dest, rank, COUNT(*) AS n, MIN(received_at) AS oldest FROM uplink GROUP BY dest, rank
         UNION ALL
         SELECT site, rank, COUNT(*), MIN(received_at) FROM downlink GROUP BY site, rank`,
      )
      .all() as { dest: string; rank: number; n: number; oldest: number }[];
    return rows.map((r) => ({
      dest: r.dest,
      priority: PRIORITIES[r.rank] as Priority,
      count: r.n,
      oldestMs: now - r.oldest,
    }));
  }

  /** Records a complete, verified blob; it is pending until one upstream has it. */
  recordBlob(
    sha256: string,
    size: number,
    path: string,
    metadata: Record<string, string>,
    now: number,
  ): void {
    this.tx(() => {
      this.db
        .prepare(
          'INSERT OR IGNORE INTO blobs (sha256, size, path, metadata, received_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(sha256, size, path, JSON.stringify(metadata), now);
    });
  }

  /** Blobs not yet uploaded to `upstream`, oldest first, with the tus URL of an upload in progress. */
  pendingBlobs(
    upstream: string,
    limit: number,
  ): { sha256: string; size: number; path: string; metadata: Record<string, string>; url: string | null }[] {
    return (
      this.db
        .prepare(
          `SELECT b.sha256, b.size, b.path, b.metadata, u.url FROM blobs b
           LEFT JOIN blob_uploads u ON u.sha256 = b.sha256 AND u.upstream = ?
           WHERE NOT EXISTS (SELECT 1 FROM blob_uploads d WHERE d.sha256 = b.sha256 AND d.done = 1)
           ORDER BY b.received_at LIMIT ?`,
        )
        .all(upstream, limit) as {
        sha256: string;
        size: number;
        path: string;
        metadata: string;
        url: string | null;
      }[]
    ).map((r) => ({ ...r, metadata: JSON.parse(r.metadata) }));
  }

  /** Persists a tus upload URL so a restarted relay resumes instead of starting over. */
  setBlobUploadUrl(sha256: string, upstream: string, url: string | null): void {
    this.tx(() => {
      this.db
        .prepare(
          'INSERT INTO blob_uploads (sha256, upstream, url) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET url = excluded.url',
        )
        .run(sha256, upstream, url);
    });
  }

  blobForwarded(sha256: string, upstream: string): void {
    this.tx(() => {
      this.db
        .prepare(
          'INSERT INTO blob_uploads (sha256, upstream, done) VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET done = 1',
        )
        .run(sha256, upstream);
      this.bump('blobs_forwarded', 1);
    });
  }

  close(): void {
    this.db.close();
  }
}
