import { openWalDatabase } from '@driftline/hop/sqlite';
import type Database from 'better-sqlite3';
import {
  type DeliveryRow,
  fromStoredRow,
  type PublicationRow,
  type PublicationStore,
  supersededReason,
  toStoredRow,
} from '../../ports/PublicationStore.js';

// Table and column names are from before decision 170 ("bundle" then meant a publication): kept as they are.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS published_bundles (
  bundle_id TEXT PRIMARY KEY, published_at INTEGER NOT NULL, row TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bundle_deliveries (
  bundle_id TEXT NOT NULL, site TEXT NOT NULL, agent TEXT NOT NULL, row TEXT NOT NULL,
  PRIMARY KEY (bundle_id, site, agent)
);
CREATE TABLE IF NOT EXISTS bundle_supersessions (
  bundle_id TEXT NOT NULL, site TEXT NOT NULL, by_bundle_id TEXT NOT NULL,
  PRIMARY KEY (bundle_id, site)
);`;

/** Earlier, unexpired, not yet superseded publications of a name and kind to a site. */
const CURRENT = `
SELECT p.bundle_id AS id FROM published_bundles p
WHERE json_extract(p.row, '$.name') = @name AND json_extract(p.row, '$.fileKind') = @kind
  AND p.bundle_id != @self
  AND coalesce(json_extract(p.row, '$.expiresAt'), @now + 1) > @now
  AND EXISTS (SELECT 1 FROM json_each(p.row, '$.sites') WHERE value = @site)
  AND NOT EXISTS (SELECT 1 FROM bundle_supersessions s WHERE s.bundle_id = p.bundle_id AND s.site = @site)
ORDER BY p.published_at, p.bundle_id`;

/** PublicationStore in its own SQLite file (`bundles.db` beside `hub.db`, its name from before decision 170), WAL. */
export class SqlitePublicationStore implements PublicationStore {
  private readonly db: Database.Database;

  constructor(path: string) {
    this.db = openWalDatabase(path, { synchronous: 'NORMAL' });
    this.db.exec(SCHEMA);
  }

  async publish(p: PublicationRow): Promise<Record<string, string[]>> {
    const put = this.db.prepare(
      'INSERT OR IGNORE INTO bundle_deliveries (bundle_id, site, agent, row) VALUES (?, ?, ?, ?)',
    );
    const current = this.db.prepare(CURRENT);
    const mark = this.db.prepare(
      'INSERT OR IGNORE INTO bundle_supersessions (bundle_id, site, by_bundle_id) VALUES (?, ?, ?)',
    );
    const rowsOf = this.db.prepare(
      'SELECT agent, row FROM bundle_deliveries WHERE bundle_id = ? AND site = ?',
    );
    const update = this.db.prepare(
      'UPDATE bundle_deliveries SET row = ? WHERE bundle_id = ? AND site = ? AND agent = ?',
    );
    const superseded: Record<string, string[]> = {};
    this.db.transaction(() => {
      for (const site of p.sites) {
        const ids = (
          current.all({
            name: p.name,
            kind: p.fileKind,
            self: p.publicationId,
            now: p.publishedAt,
            site,
          }) as {
            id: string;
          }[]
        ).map((r) => r.id);
        for (const id of ids) {
          mark.run(id, site, p.publicationId);
          for (const r of rowsOf.all(id, site) as { agent: string; row: string }[]) {
            const old = fromStoredRow<DeliveryRow>(r.row);
            const row: DeliveryRow = {
              ...old,
              state: 'superseded',
              reason: supersededReason(p.publicationId),
              updatedAt: p.publishedAt,
            };
            update.run(JSON.stringify(toStoredRow(row)), id, site, r.agent);
          }
        }
        if (ids.length > 0) superseded[site] = ids;
      }
      this.db
        .prepare('INSERT INTO published_bundles (bundle_id, published_at, row) VALUES (?, ?, ?)')
        .run(p.publicationId, p.publishedAt, JSON.stringify(toStoredRow(p)));
      for (const site of p.sites) {
        const row: DeliveryRow = {
          publicationId: p.publicationId,
          site,
          agent: null,
          state: 'queued',
          bytes: 0,
          reason: null,
          updatedAt: p.publishedAt,
        };
        put.run(p.publicationId, site, '', JSON.stringify(toStoredRow(row)));
      }
    })();
    return superseded;
  }

  async getPublication(id: string): Promise<PublicationRow | null> {
    const r = this.db.prepare('SELECT row FROM published_bundles WHERE bundle_id = ?').get(id) as
      | { row: string }
      | undefined;
    return r ? fromStoredRow<PublicationRow>(r.row) : null;
  }

  async listPublications(site?: string): Promise<PublicationRow[]> {
    // every sweep asks (publications not yet reported): prepared once
    this.latest ??= this.db.prepare(
      'SELECT row FROM published_bundles ORDER BY published_at DESC, bundle_id DESC LIMIT 1000',
    );
    const rows = this.latest.all() as { row: string }[];
    const all = rows.map((r) => fromStoredRow<PublicationRow>(r.row));
    return site ? all.filter((p) => p.sites.includes(site)) : all;
  }

  async report(rows: readonly DeliveryRow[]): Promise<void> {
    const known = this.db.prepare('SELECT 1 FROM published_bundles WHERE bundle_id = ?');
    const supersededBy = this.db.prepare(
      'SELECT by_bundle_id AS by FROM bundle_supersessions WHERE bundle_id = ? AND site = ?',
    );
    const del = this.db.prepare(
      "DELETE FROM bundle_deliveries WHERE bundle_id = ? AND site = ? AND agent = ''",
    );
    const put = this.db.prepare(
      'INSERT OR REPLACE INTO bundle_deliveries (bundle_id, site, agent, row) VALUES (?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const r of rows) {
        if (!known.get(r.publicationId)) continue;
        del.run(r.publicationId, r.site);
        // Once superseded for a site, an agent's later report (say `placed`, from before it heard) keeps
        // the hub's view: superseded, with the bytes the agent holds.
        const s = supersededBy.get(r.publicationId, r.site) as { by: string } | undefined;
        const row: DeliveryRow = s ? { ...r, state: 'superseded', reason: supersededReason(s.by) } : r;
        put.run(r.publicationId, r.site, r.agent ?? '', JSON.stringify(toStoredRow(row)));
      }
    })();
  }

  private latest: Database.Statement | undefined;

  async deliveries(id: string): Promise<DeliveryRow[]> {
    const rows = this.db
      .prepare('SELECT row FROM bundle_deliveries WHERE bundle_id = ? ORDER BY site, agent')
      .all(id) as { row: string }[];
    return rows.map((r) => fromStoredRow<DeliveryRow>(r.row));
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
