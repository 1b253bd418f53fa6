import type Database from 'better-sqlite3';

const byDb = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * `db.prepare(sql)`, prepared once per database and text: the relay's loops ask the same few questions every
 * round (a downlink pull per site, a forward check, a status), and preparing a statement costs more than
 * running most of them. No caller sets a mode on a statement (`pluck`, `raw`, `expand`), which a shared one
 * would keep.
 */
export function prepared(db: Database.Database, sql: string): Database.Statement {
  let statements = byDb.get(db);
  if (!statements) {
    statements = new Map();
    byDb.set(db, statements);
  }
  let s = statements.get(sql);
  if (!s) {
    s = db.prepare(sql);
    statements.set(sql, s);
  }
  return s;
}
