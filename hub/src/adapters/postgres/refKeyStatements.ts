import type { CellKey, RefKeysQuery } from '../../ports/HubStore.js';
import type { PgDatabase, Stmt } from './PgDatabase.js';

const st = (name: string, text: string): Stmt => ({ name: `hub_k_${name}`, text });

/**
 * `ReadStore.refDefaultKeys` on PostgreSQL (docs/decisions/640-ref-reads-whole-and-indexed.md): from the
 * ref index `cells_ref_gate (ref, site, environment, component, …)` alone, no cell row read: every key of
 * the ref by a range of the index, or the given keys (as three arrays) each by one probe.
 */
const K = {
  all: st('ref_keys', 'SELECT site, environment, component FROM cells WHERE ref = $1'),
  among: st(
    'ref_keys_among',
    `SELECT k.s AS site, k.e AS environment, k.c AS component
     FROM unnest($2::text[], $3::text[], $4::text[]) AS k(s, e, c)
     WHERE EXISTS (SELECT 1 FROM cells x WHERE x.ref = $1
       AND x.site = k.s COLLATE "C" AND x.environment = k.e COLLATE "C" AND x.component = k.c COLLATE "C")`,
  ),
};

export async function refDefaultKeys(db: PgDatabase, q: RefKeysQuery): Promise<CellKey[]> {
  if (!q.keys) return db.query<CellKey>(K.all, [q.ref]);
  if (q.keys.length === 0) return [];
  const col = (f: keyof CellKey) => q.keys?.map((k) => k[f]) ?? [];
  return db.query<CellKey>(K.among, [q.ref, col('site'), col('environment'), col('component')]);
}
