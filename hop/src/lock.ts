/**
 * `@driftline/hop/lock`: one daemon per data directory (or SQLite file), for the agent, the relay and
 * the hub (docs/decisions/416-one-daemon-per-data-directory.md). Node's own `fs` only.
 */
export { type DataDirLock, type LockResult, takeDataDirLock } from './lock/dataDirLock.js';
export { exitProcess, stopWithParent } from './lock/exitWithParent.js';
