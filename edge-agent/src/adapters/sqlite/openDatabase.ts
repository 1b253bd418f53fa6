import { BUSY_TIMEOUT_MS, isBusy, migrateLocked, openWalDatabase } from '@driftline/hop/sqlite';
import type Database from 'better-sqlite3';
import { StoreOpenError } from '../../ports/AgentStorage.js';
import { AGENT_MIGRATIONS } from './agentSchema.js';

export { StoreOpenError };

/**
 * Opens a SQLite file in WAL mode with `synchronous=FULL` (what backs a receipt or an ack must survive
 * power loss) and applies pending migrations. A corrupt or foreign file is a StoreOpenError, never a crash.
 */
export function openDatabase(path: string, migrations: readonly string[]): Database.Database {
  let db: Database.Database;
  try {
    db = openWalDatabase(path, { synchronous: 'FULL' });
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`integrity check: ${String(check)}`);
  } catch (e) {
    // Still locked after the busy timeout: another process holds it, which moving the file aside would
    // not fix and would lose what it holds.
    if (isBusy(e))
      throw new StoreOpenError(
        `cannot open the store at ${path}: another process has held it locked for ${BUSY_TIMEOUT_MS / 1000} s (another edge-agent on the same dataDir?); stop it or try again`,
      );
    throw new StoreOpenError(
      `cannot open the store at ${path}: ${(e as Error).message} ` +
        '(the file is corrupt or not a Driftline store; move it aside and restart to begin a fresh one)',
    );
  }
  migrateLocked(db, migrations);
  return db;
}

/**
 * Opens the agent's file (`<dataDir>/agent.sqlite`) with its migrations. The adapters over it
 * (`SqliteAgentStorage`, `SqliteUrlStorage`, `SqlitePublicationLedger`) share this one connection;
 * `SqliteAgentStorage.close()` closes it.
 */
export function openAgentDatabase(path: string, opts: { cacheKiB?: number } = {}): Database.Database {
  const db = openDatabase(path, AGENT_MIGRATIONS);
  // better-sqlite3 builds SQLite with a 16 MB page cache per connection, which a store of hundreds of
  // MB after weeks offline fills. The agent's working set (the current epoch's chunks, the recent runs
  // and their index pages) fits in a few MB; the OS page cache holds the rest.
  db.pragma(`cache_size = -${opts.cacheKiB ?? 4096}`);
  return db;
}
