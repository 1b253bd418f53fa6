import type Database from 'better-sqlite3';
import type { CellKey, RefKeysQuery } from '../../ports/HubStore.js';

/**
 * `ReadStore.refDefaultKeys` on SQLite (docs/decisions/640-ref-reads-whole-and-indexed.md): from the ref
 * index `cells_ref_gate (ref, site, environment, component, …)` alone, which covers both reads, so no
 * cell row is read: every key of the ref by a range of the index, or the given keys each by one seek.
 */
export function refKeyStatements(db: Database.Database) {
  const all = db.prepare('SELECT site, environment, component FROM cells WHERE ref = ?');
  // The keys as one JSON array of [site, environment, component]: one statement for the lot.
  const among = db.prepare(
    `SELECT k.value ->> 0 AS site, k.value ->> 1 AS environment, k.value ->> 2 AS component
     FROM json_each(@keys) k WHERE EXISTS (SELECT 1 FROM cells c INDEXED BY cells_ref_gate
       WHERE c.ref = @ref AND c.site = k.value ->> 0 AND c.environment = k.value ->> 1 AND c.component = k.value ->> 2)`,
  );
  return {
    refDefaultKeys(q: RefKeysQuery): CellKey[] {
      if (!q.keys) return all.all(q.ref) as CellKey[];
      if (q.keys.length === 0) return [];
      const keys = JSON.stringify(q.keys.map((k) => [k.site, k.environment, k.component]));
      return among.all({ ref: q.ref, keys }) as CellKey[];
    },
  };
}
