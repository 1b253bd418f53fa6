import type Database from 'better-sqlite3';
import type { PendingBlob } from '../../ports/BlobUploader.js';
import type { BlobCustody } from '../../ports/Custody.js';
import { prepared } from './prepared.js';

/**
 * Blobs in the relay's custody (uploaded by tus, not yet passed upstream), in the custody's SQLite file.
 * A blob belongs to the peer that uploaded it: only that peer reads it back here, besides the sites a
 * cached publication of the same hash is held for.
 */
export class SqliteBlobs implements BlobCustody {
  constructor(
    private readonly db: Database.Database,
    private readonly tx: <T>(fn: () => T) => T,
    private readonly bump: (name: string, by: number) => void,
  ) {}

  /** Records a complete, verified blob uploaded by `fromPeer`; it is pending until one upstream has it. */
  record(
    sha256: string,
    size: number,
    path: string,
    metadata: Record<string, string>,
    fromPeer: string,
    now: number,
  ): void {
    this.tx(() => {
      prepared(
        this.db,
        'INSERT OR IGNORE INTO blobs (sha256, size, path, metadata, received_at, from_peer) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(sha256, size, path, JSON.stringify(metadata), now, fromPeer);
    });
  }

  /** Blobs not yet uploaded to `upstream`, oldest first, with the tus URL of an upload in progress. */
  pending(upstream: string, limit: number, now = Number.MAX_SAFE_INTEGER): PendingBlob[] {
    return (
      prepared(
        this.db,
        `SELECT b.sha256, b.size, b.path, b.metadata, u.url FROM blobs b
           LEFT JOIN blob_uploads u ON u.sha256 = b.sha256 AND u.upstream = ?
           WHERE NOT EXISTS (SELECT 1 FROM blob_uploads d WHERE d.sha256 = b.sha256 AND d.done = 1)
             AND (u.aside_until IS NULL OR u.aside_until <= ?)
           ORDER BY b.received_at LIMIT ?`,
      ).all(upstream, now, limit) as (Omit<PendingBlob, 'metadata'> & { metadata: string })[]
    ).map((r) => ({ ...r, metadata: JSON.parse(r.metadata) }));
  }

  setAside(sha256: string, upstream: string, until: number, reason: string): void {
    this.tx(() => {
      prepared(
        this.db,
        `INSERT INTO blob_uploads (sha256, upstream, aside_until, aside_reason) VALUES (?, ?, ?, ?)
           ON CONFLICT DO UPDATE SET aside_until = excluded.aside_until, aside_reason = excluded.aside_reason`,
      ).run(sha256, upstream, until, reason.slice(0, 500));
    });
  }

  setAsideFor(upstream: string, now: number): { sha256: string; until: number; reason: string }[] {
    return prepared(
      this.db,
      `SELECT u.sha256, u.aside_until AS until, u.aside_reason AS reason FROM blob_uploads u
         JOIN blobs b ON b.sha256 = u.sha256
         WHERE u.upstream = ? AND u.aside_until > ? ORDER BY b.received_at`,
    ).all(upstream, now) as { sha256: string; until: number; reason: string }[];
  }

  /** Persists a tus upload URL so a restarted relay resumes instead of starting over. */
  setUploadUrl(sha256: string, upstream: string, url: string | null): void {
    this.tx(() => {
      prepared(
        this.db,
        'INSERT INTO blob_uploads (sha256, upstream, url) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET url = excluded.url',
      ).run(sha256, upstream, url);
    });
  }

  /**
   * An upstream has the blob: it leaves custody (as a forwarded bundle does). Answers the file to
   * delete, or null when a cached publication still uses it.
   */
  forwarded(sha256: string): string | null {
    return this.tx(() => {
      const row = prepared(this.db, 'SELECT path FROM blobs WHERE sha256 = ?').get(sha256) as
        | { path: string }
        | undefined;
      prepared(this.db, 'DELETE FROM blobs WHERE sha256 = ?').run(sha256);
      prepared(this.db, 'DELETE FROM blob_uploads WHERE sha256 = ?').run(sha256);
      this.bump('blobs_forwarded', 1);
      const cached = prepared(this.db, 'SELECT 1 FROM bundle_cache WHERE sha256 = ?').get(sha256);
      return row && !cached ? row.path : null;
    });
  }

  lost(sha256: string): void {
    this.tx(() => {
      prepared(this.db, 'DELETE FROM blobs WHERE sha256 = ?').run(sha256);
      prepared(this.db, 'DELETE FROM blob_uploads WHERE sha256 = ?').run(sha256);
      this.bump('blobs_lost', 1);
    });
  }

  /** Whether `peer` may read blob `sha256` here: it uploaded it, or a bundle held for one of its sites has it. */
  visibleTo(sha256: string, peer: { name: string; sites: readonly string[] }): boolean {
    const own = prepared(this.db, 'SELECT from_peer FROM blobs WHERE sha256 = ?').get(sha256) as
      | { from_peer: string }
      | undefined;
    if (own?.from_peer === peer.name) return true;
    const cached = prepared(
      this.db,
      "SELECT sites FROM bundle_cache WHERE sha256 = ? AND state = 'held'",
    ).get(sha256) as { sites: string } | undefined;
    if (!cached) return false;
    const sites = JSON.parse(cached.sites) as string[];
    return peer.sites.includes('*') || sites.some((s) => peer.sites.includes(s));
  }

  /** Bytes on disk: blobs in custody and publications (held or partly fetched). */
  bytes(): number {
    const r = prepared(
      this.db,
      `SELECT (SELECT COALESCE(SUM(size), 0) FROM blobs) + (SELECT COALESCE(SUM(fetched), 0) FROM bundle_cache) AS n`,
    ).get() as { n: number };
    return r.n;
  }

  /** Bytes of blobs `peer` uploaded that are still in custody. */
  peerBytes(peer: string): number {
    return (
      prepared(this.db, 'SELECT COALESCE(SUM(size), 0) AS n FROM blobs WHERE from_peer = ?').get(peer) as {
        n: number;
      }
    ).n;
  }
}
