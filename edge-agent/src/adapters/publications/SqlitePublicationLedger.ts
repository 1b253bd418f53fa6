import type Database from 'better-sqlite3';
import type { PublicationEntry, PublicationLedger } from '../../core/publications/ports.js';

/** PublicationLedger in the agent's SQLite file, table `bundles_in` (created here, additive; named before decision 170). */
export class SqlitePublicationLedger implements PublicationLedger {
  constructor(private readonly db: Database.Database) {
    db.exec(
      'CREATE TABLE IF NOT EXISTS bundles_in (bundle_id TEXT PRIMARY KEY, announced_at INTEGER NOT NULL, row TEXT NOT NULL)',
    );
  }

  get(id: string): PublicationEntry | null {
    const r = this.db.prepare('SELECT row FROM bundles_in WHERE bundle_id = ?').get(id) as
      | { row: string }
      | undefined;
    return r ? (JSON.parse(r.row) as PublicationEntry) : null;
  }

  put(e: PublicationEntry): void {
    this.db
      .prepare(
        'INSERT INTO bundles_in (bundle_id, announced_at, row) VALUES (?, ?, ?) ON CONFLICT (bundle_id) DO UPDATE SET row = excluded.row',
      )
      .run(e.bundleId, e.updatedAt, JSON.stringify(e));
  }

  all(): PublicationEntry[] {
    // every sync round asks: prepared once
    this.allRows ??= this.db.prepare('SELECT row FROM bundles_in ORDER BY announced_at, bundle_id');
    return (this.allRows.all() as { row: string }[]).map((r) => JSON.parse(r.row) as PublicationEntry);
  }
  private allRows: Database.Statement | undefined;
}

/**
 * The ledger's entries read without writing (`edge-agent status`, while the daemon may run): none
 * when no publication ever arrived (the table is created by the first `SqlitePublicationLedger`).
 */
export function readPublicationEntries(db: Database.Database): PublicationEntry[] {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'bundles_in'").get();
  if (!table) return [];
  return (
    db.prepare('SELECT row FROM bundles_in ORDER BY announced_at, bundle_id').all() as { row: string }[]
  ).map((r) => JSON.parse(r.row) as PublicationEntry);
}
