/**
 * `@driftline/hop/sqlite`: how every Driftline program opens its SQLite files (WAL, a busy timeout set
 * before the first statement, SQLITE_BUSY at open retried), so the hub, the relay and the agent agree.
 */
export {
  BUSY_TIMEOUT_MS,
  isBusy,
  migrateLocked,
  type OpenWalOptions,
  openWalDatabase,
  retryBusy,
  type SchemaVersion,
  userVersion,
} from './sqlite/openWal.js';
