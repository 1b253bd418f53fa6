/**
 * `@driftline/hop/lock`: one daemon per data directory (or SQLite file), for the agent, the relay and
 * the hub (docs/decisions/416-one-daemon-per-data-directory.md), and how such a daemon ends under a
 * supervisor (docs/operations.md, "Under a supervisor of your own"). Node's own modules and pino only.
 */
export { type DataDirLock, type LockResult, takeDataDirLock } from './lock/dataDirLock.js';
export { exitProcess, stopWithParent } from './lock/exitWithParent.js';
export { stderrLog } from './lock/stderrLog.js';
