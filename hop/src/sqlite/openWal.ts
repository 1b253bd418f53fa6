import Database from 'better-sqlite3';

/**
 * How long a statement waits for another process's lock before giving up. Several CLI processes may open
 * one store at once (an operator's script, a set-up step issuing tokens side by side) while a busy disk
 * makes each commit's fsync slow; waiting is right, failing after 5 s (better-sqlite3's default) is not.
 */
export const BUSY_TIMEOUT_MS = 30_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleepSync = (ms: number) => Atomics.wait(sleeper, 0, 0, ms);

/** Whether `e` is SQLite's SQLITE_BUSY (or one of its extended codes): another connection holds the lock. */
export const isBusy = (e: unknown): boolean => {
  const code = (e as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY_'));
};

/**
 * Runs `fn`, trying again while it fails with SQLITE_BUSY, until `timeoutMs` has passed. SQLite returns
 * SQLITE_BUSY without calling the busy handler in a few WAL cases (another process closing the last
 * connection and cleaning up the WAL, or recovering after a crash), so opening a store needs this too.
 */
export function retryBusy<T>(fn: () => T, timeoutMs = BUSY_TIMEOUT_MS, now: () => number = Date.now): T {
  const deadline = now() + timeoutMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 250)) {
    try {
      return fn();
    } catch (e) {
      if (!isBusy(e) || now() >= deadline) throw e;
      sleepSync(Math.min(wait, Math.max(1, deadline - now())));
    }
  }
}

export interface OpenWalOptions {
  /** `FULL` where a commit backs a receipt or an ack (survives power loss); `NORMAL` where a crash may lose the last commits but never corrupts. */
  synchronous: 'FULL' | 'NORMAL';
  /** Defaults to {@link BUSY_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/**
 * Opens (creating if absent) a SQLite file in WAL mode with a busy timeout set before the first statement.
 * Switching to WAL and the first read are retried while another process holds the file (see {@link retryBusy}).
 */
export function openWalDatabase(path: string, opts: OpenWalOptions): Database.Database {
  const timeoutMs = opts.timeoutMs ?? BUSY_TIMEOUT_MS;
  const db = new Database(path, { timeout: timeoutMs });
  try {
    retryBusy(() => db.pragma('journal_mode = WAL'), timeoutMs);
    db.pragma(`synchronous = ${opts.synchronous}`);
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/** Where a store keeps its schema version (`PRAGMA user_version` unless it has a table of its own). */
export interface SchemaVersion {
  get: () => number;
  set: (version: number) => void;
}

/** `PRAGMA user_version`: the schema version of most stores. */
export const userVersion = (db: Database.Database): SchemaVersion => ({
  get: () => db.pragma('user_version', { simple: true }) as number,
  set: (v) => db.pragma(`user_version = ${v}`),
});

/**
 * Runs `steps[version]`, `steps[version + 1]`… up to `upTo`, each in its own transaction with the version
 * it reaches. Each step re-reads the version inside an immediate (write-locked) transaction, so two
 * processes opening a fresh store at once never run one twice; an up-to-date store (the usual case) takes
 * no write lock, so a reader such as a CLI verb does not wait behind the daemon's writes.
 */
export function migrateLocked(
  db: Database.Database,
  steps: readonly string[],
  version: SchemaVersion = userVersion(db),
  upTo = steps.length,
): void {
  if (version.get() >= upTo) return;
  for (;;) {
    const ran = db
      .transaction(() => {
        const at = version.get();
        if (at >= upTo) return false;
        db.exec(steps[at] as string);
        version.set(at + 1);
        return true;
      })
      .immediate();
    if (!ran) return;
  }
}
