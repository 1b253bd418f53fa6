import type Database from 'better-sqlite3';
import { AgentLedger, type AgentLedgerOptions } from '../../core/ledger/AgentLedger.js';
import { openAgentDatabase } from './openDatabase.js';
import { SqliteAgentStorage } from './SqliteAgentStorage.js';

export interface SqliteLedgerOptions extends AgentLedgerOptions {
  /** The agent's file, `<dataDir>/agent.sqlite`. */
  path: string;
  /** SQLite page cache of the connection, in KiB (default 4 MiB). */
  cacheKiB?: number;
}

/**
 * The agent's ledger over its SQLite file: what `edge-agent run` and `status` open. `db` is the one
 * connection for the other adapters over the same file (`SqliteUrlStorage`, `SqlitePublicationLedger`);
 * closing the ledger closes it.
 */
export function openSqliteLedger(options: SqliteLedgerOptions): {
  ledger: AgentLedger;
  storage: SqliteAgentStorage;
  db: Database.Database;
} {
  const { path, cacheKiB, ...ledgerOptions } = options;
  const db = openAgentDatabase(path, { cacheKiB });
  const storage = new SqliteAgentStorage(db, path);
  try {
    return { ledger: new AgentLedger(storage, ledgerOptions), storage, db };
  } catch (e) {
    storage.close();
    throw e;
  }
}
