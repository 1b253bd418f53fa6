import type pg from 'pg';
import { LOCK } from './locks.js';
import { MIGRATIONS, type Migration } from './migrations.js';

/** What one `migrate` did. */
export interface MigrateResult {
  /** Migrations applied now, in order (empty when the schema was already current). */
  applied: { version: number; name: string }[];
  /** The schema version afterwards. */
  version: number;
}

const TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now()
)`;

/** The newest version this hub knows. */
export const LATEST_VERSION = MIGRATIONS.length;

/** A schema newer than this hub's: it must not write to it. */
export class SchemaTooNewError extends Error {
  constructor(readonly version: number) {
    super(
      `the database schema is at version ${version}, newer than this hub knows (${LATEST_VERSION}); run the hub version that migrated it, or a newer one`,
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Brings the database to {@link LATEST_VERSION}: every missing migration, in order, in one transaction
 * under an advisory lock, so two hubs starting at once apply them once (the second waits, then finds
 * nothing to do). Either every missing migration is applied or none.
 */
export async function migrate(client: pg.ClientBase, migrations = MIGRATIONS): Promise<MigrateResult> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, 0)', [LOCK.migrations]);
    await client.query(TABLE);
    const done = await appliedVersions(client);
    const newest = Math.max(0, ...done);
    if (newest > migrations.length) throw new SchemaTooNewError(newest);
    const todo: Migration[] = migrations.filter((m) => !done.has(m.version));
    for (const m of todo) {
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
    }
    await client.query('COMMIT');
    return { applied: todo.map(({ version, name }) => ({ version, name })), version: migrations.length };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  }
}

/** The schema version of the database without changing it: 0 when no migration ran there yet. */
export async function schemaVersion(client: pg.ClientBase): Promise<number> {
  const t = await client.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!t.rows[0]?.t) return 0;
  return Math.max(0, ...(await appliedVersions(client)));
}

async function appliedVersions(client: pg.ClientBase): Promise<Set<number>> {
  const r = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
  return new Set(r.rows.map((x) => Number(x.version)));
}
