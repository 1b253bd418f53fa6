import Database from 'better-sqlite3';

/** A store file that cannot be opened or is not an agent store; the message says what to do. */
export class StoreOpenError extends Error {
  readonly code = 'store-unusable';
  constructor(message: string) {
    super(message);
    this.name = 'StoreOpenError';
  }
}

/**
 * Opens a SQLite file in WAL mode with `synchronous=FULL` (what backs a receipt or an ack must survive
 * power loss) and applies pending migrations. A corrupt or foreign file is a StoreOpenError, never a crash.
 */
export function openDatabase(path: string, migrations: readonly string[]): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`integrity check: ${String(check)}`);
  } catch (e) {
    throw new StoreOpenError(
      `cannot open the store at ${path}: ${(e as Error).message} ` +
        '(the file is corrupt or not a Driftline store; move it aside and restart to begin a fresh one)',
    );
  }
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < migrations.length; v++) {
    db.transaction(() => {
      db.exec(migrations[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return db;
}
