import type Database from 'better-sqlite3';
import type { AnnouncedBlob, CachedPublication, PublicationCache } from '../../ports/PublicationCache.js';
import { prepared } from './prepared.js';

type Row = Omit<CachedPublication, 'sites'> & { sites: string };
const toCached = (r: Row): CachedPublication => ({ ...r, sites: JSON.parse(r.sites) as string[] });
/** The columns as CachedPublication names them (the table's are snake_case). */
const COLS = 'sha256, size, name, sites, state, fetched, expires_at AS expiresAt, reason';

/**
 * Which publication needs which blob at which site (created here, additive). `sha256` is null for a
 * publication superseded before it was announced here; a ref with `bundle_id` '' is an older manifest's.
 * Tables, columns and counter names are from before decision 170 ("bundle" then meant a publication).
 */
const REFS = `CREATE TABLE IF NOT EXISTS bundle_cache_refs (
  bundle_id TEXT NOT NULL, site TEXT NOT NULL, sha256 TEXT, superseded INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (bundle_id, site))`;

/** PublicationCache in the relay's SQLite file (table `bundle_cache`, migration 2; `bundle_cache_refs`). */
export class SqlitePublicationCache implements PublicationCache {
  constructor(
    private readonly db: Database.Database,
    private readonly quotaBytes: number,
    private readonly now: () => number,
    private readonly count: (name: string, by: number) => void,
  ) {
    db.exec(REFS);
  }

  private get(sha: string): CachedPublication | null {
    const r = prepared(this.db, `SELECT ${COLS} FROM bundle_cache WHERE sha256 = ?`).get(sha) as
      | Row
      | undefined;
    return r ? toCached(r) : null;
  }

  note(items: readonly AnnouncedBlob[]): void {
    this.db
      .transaction(() => {
        for (const i of items) {
          const ref = prepared(
            this.db,
            'SELECT superseded FROM bundle_cache_refs WHERE bundle_id = ? AND site = ?',
          ).get(i.publicationId ?? '', i.site) as { superseded: number } | undefined;
          if (ref?.superseded) continue; // announced after what replaced it: nothing to fetch
          prepared(
            this.db,
            'INSERT INTO bundle_cache_refs (bundle_id, site, sha256) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET sha256 = excluded.sha256',
          ).run(i.publicationId ?? '', i.site, i.sha256);
          this.add(i);
          for (const old of i.supersedes ?? []) this.supersede(old, i.site);
        }
      })
      .immediate();
  }

  /** Marks one publication superseded at one site; its blob goes once no live publication needs it. */
  private supersede(publicationId: string, site: string): void {
    const r = prepared(
      this.db,
      'SELECT sha256, superseded FROM bundle_cache_refs WHERE bundle_id = ? AND site = ?',
    ).get(publicationId, site) as { sha256: string | null; superseded: number } | undefined;
    if (r?.superseded) return;
    prepared(
      this.db,
      'INSERT INTO bundle_cache_refs (bundle_id, site, sha256, superseded) VALUES (?, ?, NULL, 1) ON CONFLICT DO UPDATE SET superseded = 1',
    ).run(publicationId, site);
    if (!r?.sha256) return;
    // Content-addressed, one copy: another live publication (any site, or this one's successor with the
    // same bytes) keeps the blob.
    const live = prepared(
      this.db,
      'SELECT 1 FROM bundle_cache_refs WHERE sha256 = ? AND superseded = 0 LIMIT 1',
    ).get(r.sha256);
    if (live) return;
    const gone = prepared(
      this.db,
      "UPDATE bundle_cache SET state = 'superseded', reason = ? WHERE sha256 = ? AND state != 'superseded'",
    ).run(`superseded by a later publication (${publicationId} at ${site})`, r.sha256);
    if (gone.changes > 0) this.count('bundles_superseded', 1);
  }

  private add(i: AnnouncedBlob): void {
    const have = this.get(i.sha256);
    if (have) {
      const sites = [...new Set([...have.sites, i.site])];
      // A blob marked superseded but not yet removed is live again: held if it was whole.
      prepared(
        this.db,
        `UPDATE bundle_cache SET sites = ?, expires_at = max(expires_at, ?),
             state = CASE WHEN state != 'superseded' THEN state WHEN fetched >= size THEN 'held' ELSE 'fetching' END,
             reason = CASE WHEN state = 'superseded' THEN NULL ELSE reason END
           WHERE sha256 = ?`,
      ).run(JSON.stringify(sites), i.expiresAt, i.sha256);
      return;
    }
    const used = (
      prepared(
        this.db,
        "SELECT coalesce(sum(size), 0) AS n FROM bundle_cache WHERE state NOT IN ('refused', 'superseded')",
      ).get() as {
        n: number;
      }
    ).n;
    const over = used + i.size > this.quotaBytes;
    prepared(
      this.db,
      'INSERT INTO bundle_cache (sha256, size, name, sites, state, fetched, expires_at, created_at, reason) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)',
    ).run(
      i.sha256,
      i.size,
      i.name,
      JSON.stringify([i.site]),
      over ? 'refused' : 'fetching',
      i.expiresAt,
      this.now(),
      over ? `over the relay's publications quota (${used} + ${i.size} > ${this.quotaBytes} bytes)` : null,
    );
    if (over) this.count('bundles_refused_quota', 1);
  }

  nextToFetch(): CachedPublication | null {
    const r = prepared(
      this.db,
      `SELECT ${COLS} FROM bundle_cache WHERE state = 'fetching' ORDER BY created_at, sha256 LIMIT 1`,
    ).get() as Row | undefined;
    return r ? toCached(r) : null;
  }

  setFetched(sha: string, bytes: number): void {
    prepared(this.db, 'UPDATE bundle_cache SET fetched = ? WHERE sha256 = ?').run(bytes, sha);
  }

  held(sha: string): void {
    // Only a blob still being fetched: one superseded while its last chunk was in flight stays superseded.
    prepared(
      this.db,
      "UPDATE bundle_cache SET state = 'held', fetched = size WHERE sha256 = ? AND state = 'fetching'",
    ).run(sha);
    this.count('bundles_fetched', 1);
  }

  refuse(sha: string, reason: string): void {
    prepared(this.db, "UPDATE bundle_cache SET state = 'refused', reason = ? WHERE sha256 = ?").run(
      reason,
      sha,
    );
    this.count('bundles_refused', 1);
  }

  expire(now: number): CachedPublication[] {
    const rows = (
      prepared(this.db, `SELECT ${COLS} FROM bundle_cache WHERE expires_at <= ?`).all(now) as Row[]
    ).map(toCached);
    if (rows.length > 0) {
      prepared(this.db, 'DELETE FROM bundle_cache WHERE expires_at <= ?').run(now);
      this.count('bundles_expired', rows.length);
    }
    return rows;
  }

  removeSuperseded(): CachedPublication[] {
    return this.db
      .transaction(() => {
        const rows = (
          prepared(this.db, `SELECT ${COLS} FROM bundle_cache WHERE state = 'superseded'`).all() as Row[]
        ).map(toCached);
        prepared(this.db, "DELETE FROM bundle_cache WHERE state = 'superseded'").run();
        return rows;
      })
      .immediate();
  }

  list(): CachedPublication[] {
    return (prepared(this.db, `SELECT ${COLS} FROM bundle_cache ORDER BY created_at`).all() as Row[]).map(
      toCached,
    );
  }
}
