import Database from 'better-sqlite3';
import type { BundleRow, BundleStore, DeliveryRow } from '../../ports/BundleStore.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS published_bundles (
  bundle_id TEXT PRIMARY KEY, published_at INTEGER NOT NULL, row TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bundle_deliveries (
  bundle_id TEXT NOT NULL, site TEXT NOT NULL, agent TEXT NOT NULL, row TEXT NOT NULL,
  PRIMARY KEY (bundle_id, site, agent)
);`;

/** BundleStore in its own SQLite file (`bundles.db` beside `hub.db`), WAL. */
export class SqliteBundleStore implements BundleStore {
  private readonly db: Database.Database;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
  }

  async publish(b: BundleRow): Promise<void> {
    const put = this.db.prepare(
      'INSERT OR IGNORE INTO bundle_deliveries (bundle_id, site, agent, row) VALUES (?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO published_bundles (bundle_id, published_at, row) VALUES (?, ?, ?)')
        .run(b.bundleId, b.publishedAt, JSON.stringify(b));
      for (const site of b.sites) {
        const row: DeliveryRow = {
          bundleId: b.bundleId,
          site,
          agent: null,
          state: 'queued',
          bytes: 0,
          reason: null,
          updatedAt: b.publishedAt,
        };
        put.run(b.bundleId, site, '', JSON.stringify(row));
      }
    })();
  }

  async getBundle(id: string): Promise<BundleRow | null> {
    const r = this.db.prepare('SELECT row FROM published_bundles WHERE bundle_id = ?').get(id) as
      | { row: string }
      | undefined;
    return r ? (JSON.parse(r.row) as BundleRow) : null;
  }

  async listBundles(site?: string): Promise<BundleRow[]> {
    const rows = this.db
      .prepare('SELECT row FROM published_bundles ORDER BY published_at DESC, bundle_id DESC LIMIT 1000')
      .all() as { row: string }[];
    const all = rows.map((r) => JSON.parse(r.row) as BundleRow);
    return site ? all.filter((b) => b.sites.includes(site)) : all;
  }

  async report(rows: readonly DeliveryRow[]): Promise<void> {
    const known = this.db.prepare('SELECT 1 FROM published_bundles WHERE bundle_id = ?');
    const del = this.db.prepare(
      "DELETE FROM bundle_deliveries WHERE bundle_id = ? AND site = ? AND agent = ''",
    );
    const put = this.db.prepare(
      'INSERT OR REPLACE INTO bundle_deliveries (bundle_id, site, agent, row) VALUES (?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const r of rows) {
        if (!known.get(r.bundleId)) continue;
        del.run(r.bundleId, r.site);
        put.run(r.bundleId, r.site, r.agent ?? '', JSON.stringify(r));
      }
    })();
  }

  async deliveries(id: string): Promise<DeliveryRow[]> {
    const rows = this.db
      .prepare('SELECT row FROM bundle_deliveries WHERE bundle_id = ? ORDER BY site, agent')
      .all(id) as { row: string }[];
    return rows.map((r) => JSON.parse(r.row) as DeliveryRow);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
