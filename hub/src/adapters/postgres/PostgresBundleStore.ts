import type { BundleRow, BundleStore, DeliveryRow } from '../../ports/BundleStore.js';
import { LOCK, lockSql } from './locks.js';
import type { PgDatabase, Stmt } from './PgDatabase.js';

const st = (name: string, text: string): Stmt => ({ name: `bundles_${name}`, text });

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
  /** Every delivery row of a superseded bundle at a site becomes `superseded`, saying why (`$3`). */
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

const supersededReason = (by: string) => `superseded by bundle ${by} (same name and kind)`;

/**
 * BundleStore on PostgreSQL, in the hub store's database. Same semantics as `SqliteBundleStore`; a
 * publication takes the advisory lock of its name and kind, so two hubs publishing the same name at
 * once supersede one after the other.
 */
export class PostgresBundleStore implements BundleStore {
  constructor(private readonly db: PgDatabase) {
    db.retain();
  }

  publish(b: BundleRow): Promise<Record<string, string[]>> {
    return this.db.tx(async (c) => {
      const q = async <T>(s: Stmt, values: unknown[]) => (await c.query({ ...s, values })).rows as T[];
      await q(B.lock, [`${b.name}\u0001${b.fileKind}`]);
      const superseded: Record<string, string[]> = {};
      for (const site of b.sites) {
        const args = [b.name, b.fileKind, b.bundleId, b.publishedAt, site];
        const ids = (await q<{ id: string }>(B.current, args)).map((r) => r.id);
        for (const id of ids) {
          await q(B.mark, [id, site, b.bundleId]);
          await q(B.supersede, [id, site, supersededReason(b.bundleId), b.publishedAt]);
        }
        if (ids.length > 0) superseded[site] = ids;
      }
      await q(B.insert, [
        b.bundleId,
        b.name,
        b.fileKind,
        b.sites,
        b.expiresAt,
        b.publishedAt,
        JSON.stringify(b),
      ]);
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
        await q(B.queued, [b.bundleId, site, JSON.stringify(row)]);
      }
      return superseded;
    });
  }

  async getBundle(id: string): Promise<BundleRow | null> {
    return (await this.db.query<{ row: BundleRow }>(B.get, [id]))[0]?.row ?? null;
  }

  async listBundles(site?: string): Promise<BundleRow[]> {
    const all = (await this.db.query<{ row: BundleRow }>(B.list)).map((r) => r.row);
    return site ? all.filter((b) => b.sites.includes(site)) : all;
  }

  report(rows: readonly DeliveryRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return this.db.tx(async (c) => {
      const q = async <T>(s: Stmt, values: unknown[]) => (await c.query({ ...s, values })).rows as T[];
      for (const r of rows) {
        if ((await q(B.known, [r.bundleId])).length === 0) continue;
        await q(B.delQueued, [r.bundleId, r.site]);
        // Once superseded for a site, an agent's later report (say `placed`, from before it heard) keeps
        // the hub's view: superseded, with the bytes the agent holds.
        const [s] = await q<{ by: string }>(B.supersededBy, [r.bundleId, r.site]);
        const row: DeliveryRow = s ? { ...r, state: 'superseded', reason: supersededReason(s.by) } : r;
        await q(B.put, [r.bundleId, r.site, r.agent ?? '', JSON.stringify(row)]);
      }
    });
  }

  async deliveries(id: string): Promise<DeliveryRow[]> {
    return (await this.db.query<{ row: DeliveryRow }>(B.deliveries, [id])).map((r) => r.row);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
