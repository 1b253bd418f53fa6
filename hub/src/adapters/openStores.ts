import { existsSync, readFileSync } from 'node:fs';
import type { HubConfig } from '../config.js';
import { driftStorePath, publicationStorePath, storePath } from '../dataDir.js';
import type { DriftStore } from '../ports/DriftStore.js';
import type { HubStore } from '../ports/HubStore.js';
import type { PublicationStore } from '../ports/PublicationStore.js';
import { isUnavailable } from './postgres/errors.js';
import { LATEST_VERSION, type MigrateResult, SchemaTooNewError } from './postgres/migrate.js';
import { PgDatabase } from './postgres/PgDatabase.js';
import { PostgresDriftStore } from './postgres/PostgresDriftStore.js';
import { PostgresHubStore } from './postgres/PostgresHubStore.js';
import { PostgresPublicationStore } from './postgres/PostgresPublicationStore.js';
import { SqlitePublicationStore } from './publish/SqlitePublicationStore.js';
import { SqliteDriftStore } from './sqlite/SqliteDriftStore.js';
import { SqliteHubStore } from './sqlite/SqliteHubStore.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from './sqlite/schema.js';

/** The hub's two stores, on the database `hub.yaml`'s `store` names. */
export interface Stores {
  store: HubStore;
  publications: PublicationStore;
  /** The PostgreSQL database both stores are on (other hubs may share it); absent for SQLite. */
  postgres?: PgDatabase;
}

/** Where the store is, for messages: the SQLite file, or the database URL (it holds no password). */
export const storeLabel = (c: HubConfig): string =>
  c.store.kind === 'postgres' ? (c.store.url as string) : storePath(c.dataDir);

/** The database password from `store.passwordFile` (its first line) or `store.passwordEnv`, if set. */
export function storePassword(c: HubConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { passwordFile, passwordEnv } = c.store;
  if (passwordFile) {
    try {
      return readFileSync(passwordFile, 'utf8').split(/\r?\n/)[0] ?? '';
    } catch (e) {
      throw new Error(`store.passwordFile: cannot read ${passwordFile} (${(e as Error).message})`);
    }
  }
  if (passwordEnv) {
    const v = env[passwordEnv];
    if (v === undefined) throw new Error(`store.passwordEnv: ${passwordEnv} is not set in the environment`);
    return v;
  }
  return undefined;
}

function openDatabase(c: HubConfig, onIdleError?: (e: Error) => void, env = process.env): PgDatabase {
  return new PgDatabase({
    url: c.store.url as string,
    password: storePassword(c, env),
    ...(c.store.maxConnections ? { max: c.store.maxConnections } : {}),
    ...(onIdleError ? { onIdleError } : {}),
  });
}

/**
 * Opens the stores `hub.yaml` names (`store.kind`). PostgreSQL is migrated first; when it cannot be
 * reached the stores are returned all the same and `onUnavailable` is told: every call fails as
 * unavailable (503 on the wire) until the database answers, then the schema is migrated and the hub
 * goes on by itself. `store` replaces the hub store (tests); the publication store is opened anyway.
 */
export async function openStores(
  c: HubConfig,
  opts: { store?: HubStore; onUnavailable?: (e: Error) => void; onIdleError?: (e: Error) => void } = {},
): Promise<Stores> {
  if (c.store.kind === 'sqlite')
    return {
      store: opts.store ?? new SqliteHubStore(storePath(c.dataDir)),
      publications: new SqlitePublicationStore(publicationStorePath(c.dataDir)),
    };
  const db = openDatabase(c, opts.onIdleError);
  const stores = {
    store: opts.store ?? new PostgresHubStore(db),
    publications: new PostgresPublicationStore(db),
    postgres: db,
  };
  try {
    await db.ready();
  } catch (e) {
    if (!isUnavailable(e)) {
      await stores.publications.close();
      if (!opts.store) await stores.store.close();
      throw e;
    }
    opts.onUnavailable?.(e as Error);
  }
  return stores;
}

/** The hub store alone, migrated and reachable (or an error saying why not): for command-line verbs. */
export async function openHubStore(c: HubConfig): Promise<HubStore> {
  if (c.store.kind === 'sqlite') return new SqliteHubStore(storePath(c.dataDir));
  const store = new PostgresHubStore(openDatabase(c));
  try {
    await store.listUsers();
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}

/**
 * The drift store (decisions 421, 470): `drift.db` in the data directory beside a SQLite store; on
 * PostgreSQL the same database as the hub store (`postgres`, else a pool of its own for a command-line
 * verb), so every hub on it sees the same episodes and waivers.
 */
export function openDriftStore(c: HubConfig, postgres?: PgDatabase): DriftStore {
  if (c.store.kind === 'sqlite') return new SqliteDriftStore(driftStorePath(c.dataDir));
  return new PostgresDriftStore(postgres ?? openDatabase(c));
}

/** `hub migrate`: what was applied now, and the version the store is at. */
export async function migrateStore(
  c: HubConfig,
): Promise<MigrateResult & { kind: HubConfig['store']['kind']; where: string }> {
  if (c.store.kind === 'sqlite') {
    // The SQLite store migrates whenever it is opened; report the version it is at.
    await new SqliteHubStore(storePath(c.dataDir)).close();
    await new SqlitePublicationStore(publicationStorePath(c.dataDir)).close();
    return { kind: 'sqlite', where: storeLabel(c), applied: [], version: SQLITE_MIGRATIONS.length };
  }
  const db = openDatabase(c).retain();
  try {
    return { kind: 'postgres', where: storeLabel(c), ...(await db.migrateNow()) };
  } finally {
    await db.close();
  }
}

/**
 * `hub config check` on the store, creating nothing: for SQLite whether the file is there, for
 * PostgreSQL whether the database answers and is migrated; then how many users may sign in.
 */
export async function checkStore(
  c: HubConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ problems: string[]; warnings: string[]; users?: number }> {
  const active = async (s: HubStore) => {
    try {
      return (await s.listUsers()).filter((u) => u.revokedAt === null).length;
    } finally {
      await s.close();
    }
  };
  if (c.store.kind === 'sqlite') {
    if (!existsSync(storePath(c.dataDir)))
      return {
        problems: [],
        warnings: [
          `dataDir: no store at ${storePath(c.dataDir)} yet; \`hub init\` (or the first \`hub run\`) makes it`,
        ],
      };
    return { problems: [], warnings: [], users: await active(new SqliteHubStore(storePath(c.dataDir))) };
  }
  let db: PgDatabase;
  try {
    db = openDatabase(c, undefined, env).retain();
  } catch (e) {
    return { problems: [(e as Error).message], warnings: [] };
  }
  let version: number;
  try {
    version = await db.schemaVersion();
  } catch (e) {
    await db.close();
    return { problems: [`store.url: ${(e as Error).message}`], warnings: [] };
  }
  if (version > LATEST_VERSION) {
    await db.close();
    return { problems: [`store: ${new SchemaTooNewError(version).message}`], warnings: [] };
  }
  if (version < LATEST_VERSION) {
    await db.close();
    return {
      problems: [],
      warnings: [
        `store: the database is at schema version ${version} of ${LATEST_VERSION}; \`hub migrate\` (or the first \`hub run\`) brings it up to date`,
      ],
    };
  }
  const users = await active(new PostgresHubStore(db));
  await db.close();
  return { problems: [], warnings: [], users };
}
