import type Database from 'better-sqlite3';
import type { BundleCache, CachedBundle } from '../../ports/BundleCache.js';

type Row = Omit<CachedBundle, 'sites'> & { sites: string };
const toBundle = (r: Row): CachedBundle => ({ ...r, sites: JSON.parse(r.sites) as string[] });
/** The columns as CachedBundle names them (the table's are snake_case). */
const COLS = 'sha256, size, name, sites, state, fetched, expires_at AS expiresAt, reason';

/** BundleCache in the relay's SQLite file (table `bundle_cache`, migration 2). */
export class SqliteBundleCache implements BundleCache {
  constructor(
    private readonly db: Database.Database,
    private readonly quotaBytes: number,
    private readonly now: () => number,
    private readonly count: (name: string, by: number) => void,
  ) {}

  private get(sha: string): CachedBundle | null {
    const r = this.db.prepare(`SELECT ${COLS} FROM bundle_cache WHERE sha256 = ?`).get(sha) as
      | Row
      | undefined;
    return r ? toBundle(r) : null;
  }

  note(
    items: readonly { sha256: string; size: number; name: string; site: string; expiresAt: number }[],
  ): void {
    this.db
      .transaction(() => {
        for (const i of items) {
          const have = this.get(i.sha256);
          if (have) {
            const sites = [...new Set([...have.sites, i.site])];
            this.db
              .prepare('UPDATE bundle_cache SET sites = ?, expires_at = max(expires_at, ?) WHERE sha256 = ?')
              .run(JSON.stringify(sites), i.expiresAt, i.sha256);
            continue;
          }
          const used = (
            this.db
              .prepare("SELECT coalesce(sum(size), 0) AS n FROM bundle_cache WHERE state != 'refused'")
              .get() as {
              n: number;
            }
          ).n;
          const over = used + i.size > this.quotaBytes;
          this.db
            .prepare(
              'INSERT INTO bundle_cache (sha256, size, name, sites, state, fetched, expires_at, created_at, reason) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)',
            )
            .run(
              i.sha256,
              i.size,
              i.name,
              JSON.stringify([i.site]),
              over ? 'refused' : 'fetching',
              i.expiresAt,
              this.now(),
              over ? `over the relay's bundle quota (${used} + ${i.size} > ${this.quotaBytes} bytes)` : null,
            );
          if (over) this.count('bundles_refused_quota', 1);
        }
      })
      .immediate();
  }

  nextToFetch(): CachedBundle | null {
    const r = this.db
      .prepare(
        `SELECT ${COLS} FROM bundle_cache WHERE state = 'fetching' ORDER BY created_at, sha256 LIMIT 1`,
      )
      .get() as Row | undefined;
    return r ? toBundle(r) : null;
  }

  setFetched(sha: string, bytes: number): void {
    this.db.prepare('UPDATE bundle_cache SET fetched = ? WHERE sha256 = ?').run(bytes, sha);
  }

  held(sha: string): void {
    this.db.prepare("UPDATE bundle_cache SET state = 'held', fetched = size WHERE sha256 = ?").run(sha);
    this.count('bundles_fetched', 1);
  }

  refuse(sha: string, reason: string): void {
    this.db
      .prepare("UPDATE bundle_cache SET state = 'refused', reason = ? WHERE sha256 = ?")
      .run(reason, sha);
    this.count('bundles_refused', 1);
  }

  expire(now: number): CachedBundle[] {
    const rows = (
      this.db.prepare(`SELECT ${COLS} FROM bundle_cache WHERE expires_at <= ?`).all(now) as Row[]
    ).map(toBundle);
    if (rows.length > 0) {
      this.db.prepare('DELETE FROM bundle_cache WHERE expires_at <= ?').run(now);
      this.count('bundles_expired', rows.length);
    }
    return rows;
  }

  list(): CachedBundle[] {
    return (this.db.prepare(`SELECT ${COLS} FROM bundle_cache ORDER BY created_at`).all() as Row[]).map(
      toBundle,
    );
  }
}
