import {
  type DeliveryRow,
  fromStoredRow,
  type PublicationRow,
  type PublicationStore,
  supersededReason,
  toStoredRow,
} from '../../ports/PublicationStore.js';
import { LOCK, lockSql } from './locks.js';
import type { PgDatabase, Stmt } from './PgDatabase.js';

const st = (name: string, text: string): Stmt => ({ name: `publications_${name}`, text });

// Table and column names are from before decision 170 ("bundle" then meant a publication): kept as they are.

const B = {
  lock: st('lock', lockSql(LOCK.publication)),
  /** Earlier, unexpired, not yet superseded publications of a name and kind to a site. */
  current: st(
    'current',
    `SELECT p.bundle_id AS id FROM published_bundles p
     WHERE p.name = $1 AND p.file_kind = $2 AND p.bundle_id <> $3
       AND coalesce(p.expires_at, $4 + 1) > $4 AND $5 = ANY(p.sites)
       AND NOT EXISTS (SELECT 1 FROM bundle_supersessions s WHERE s.bundle_id = p.bundle_id AND s.site = $5)
     ORDER BY p.published_at, p.bundle_id`,
  ),
  mark: st(
    'mark',
    'INSERT INTO bundle_supersessions (bundle_id, site, by_bundle_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
  ),
  /** Every delivery row of a superseded publication at a site becomes `superseded`, saying why (`$3`). */
  supersede: st(
    'supersede',
    `UPDATE bundle_deliveries SET row = (row::jsonb || jsonb_build_object(
       'state', 'superseded', 'reason', $3::text, 'updatedAt', $4::bigint))::json
     WHERE bundle_id = $1 AND site = $2`,
  ),
  insert: st(
    'insert',
    `INSERT INTO published_bundles (bundle_id, name, file_kind, sites, expires_at, published_at, row)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  ),
  queued: st(
    'queued',
    `INSERT INTO bundle_deliveries (bundle_id, site, agent, row) VALUES ($1, $2, '', $3)
     ON CONFLICT DO NOTHING`,
  ),
  get: st('get', 'SELECT row FROM published_bundles WHERE bundle_id = $1'),
  list: st('list', 'SELECT row FROM published_bundles ORDER BY published_at DESC, bundle_id DESC LIMIT 1000'),
  known: st('known', 'SELECT 1 AS one FROM published_bundles WHERE bundle_id = $1'),
  supersededBy: st(
    'superseded_by',
    'SELECT by_bundle_id AS by FROM bundle_supersessions WHERE bundle_id = $1 AND site = $2',
  ),
  delQueued: st(
    'del_queued',
    "DELETE FROM bundle_deliveries WHERE bundle_id = $1 AND site = $2 AND agent = ''",
  ),
  put: st(
    'put',
    `INSERT INTO bundle_deliveries (bundle_id, site, agent, row) VALUES ($1, $2, $3, $4)
     ON CONFLICT (bundle_id, site, agent) DO UPDATE SET row = EXCLUDED.row`,
  ),
  deliveries: st('deliveries', 'SELECT row FROM bundle_deliveries WHERE bundle_id = $1 ORDER BY site, agent'),
};

/**
 * PublicationStore on PostgreSQL, in the hub store's database. Same semantics as `SqlitePublicationStore`; a
 * publication takes the advisory lock of its name and kind, so two hubs publishing the same name at
 * once supersede one after the other.
 */
export class PostgresPublicationStore implements PublicationStore {
  constructor(private readonly db: PgDatabase) {
    db.retain();
  }

  publish(p: PublicationRow): Promise<Record<string, string[]>> {
    return this.db.tx(async (c) => {
      const q = async <T>(s: Stmt, values: unknown[]) => (await c.query({ ...s, values })).rows as T[];
      await q(B.lock, [`${p.name}\u0001${p.fileKind}`]);
      const superseded: Record<string, string[]> = {};
      for (const site of p.sites) {
        const args = [p.name, p.fileKind, p.publicationId, p.publishedAt, site];
        const ids = (await q<{ id: string }>(B.current, args)).map((r) => r.id);
        for (const id of ids) {
          await q(B.mark, [id, site, p.publicationId]);
          await q(B.supersede, [id, site, supersededReason(p.publicationId), p.publishedAt]);
        }
        if (ids.length > 0) superseded[site] = ids;
      }
      await q(B.insert, [
        p.publicationId,
        p.name,
        p.fileKind,
        p.sites,
        p.expiresAt,
        p.publishedAt,
        JSON.stringify(toStoredRow(p)),
      ]);
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
        await q(B.queued, [p.publicationId, site, JSON.stringify(toStoredRow(row))]);
      }
      return superseded;
    });
  }

  async getPublication(id: string): Promise<PublicationRow | null> {
    const r = (await this.db.query<{ row: unknown }>(B.get, [id]))[0];
    return r ? fromStoredRow<PublicationRow>(r.row) : null;
  }

  async listPublications(site?: string): Promise<PublicationRow[]> {
    const all = (await this.db.query<{ row: unknown }>(B.list)).map((r) =>
      fromStoredRow<PublicationRow>(r.row),
    );
    return site ? all.filter((p) => p.sites.includes(site)) : all;
  }

  report(rows: readonly DeliveryRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return this.db.tx(async (c) => {
      const q = async <T>(s: Stmt, values: unknown[]) => (await c.query({ ...s, values })).rows as T[];
      for (const r of rows) {
        if ((await q(B.known, [r.publicationId])).length === 0) continue;
        await q(B.delQueued, [r.publicationId, r.site]);
        // Once superseded for a site, an agent's later report (say `placed`, from before it heard) keeps
        // the hub's view: superseded, with the bytes the agent holds.
        const [s] = await q<{ by: string }>(B.supersededBy, [r.publicationId, r.site]);
        const row: DeliveryRow = s ? { ...r, state: 'superseded', reason: supersededReason(s.by) } : r;
        await q(B.put, [r.publicationId, r.site, r.agent ?? '', JSON.stringify(toStoredRow(row))]);
      }
    });
  }

  async deliveries(id: string): Promise<DeliveryRow[]> {
    return (await this.db.query<{ row: unknown }>(B.deliveries, [id])).map((r) =>
      fromStoredRow<DeliveryRow>(r.row),
    );
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
