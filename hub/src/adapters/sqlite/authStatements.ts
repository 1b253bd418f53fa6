import { migrateLocked } from '@driftline/hop/sqlite';
import type Database from 'better-sqlite3';
import type { AuditRow, SessionRow, UserRow, WriteSet } from '../../ports/HubStore.js';
import { MIGRATIONS } from './schema.js';

type Row = { row: string };
const parse = <T>(r: Row | undefined): T | null => (r ? (JSON.parse(r.row) as T) : null);

/**
 * Brings a store file to the newest schema: version 1 is created when absent, then every later
 * migration runs once, each in its own transaction with the version it reaches.
 */
export function migrate(db: Database.Database): void {
  db.exec(MIGRATIONS[0] as string);
  // `hub key` and `hub user add` side by side may open a fresh store at once: see migrateLocked.
  const read = db.prepare("SELECT value FROM meta WHERE key = 'schema'");
  const write = db.prepare("UPDATE meta SET value = ? WHERE key = 'schema'");
  migrateLocked(db, MIGRATIONS, {
    get: () => Number((read.get() as { value: string }).value),
    set: (v) => write.run(String(v)),
  });
}

/** Statements and row mapping for users, sessions and the audit log. */
export function authStatements(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    upUser: p(
      'INSERT INTO users (name, token_sha256, row) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET token_sha256 = excluded.token_sha256, row = excluded.row',
    ),
    getUser: p('SELECT row FROM users WHERE name = ?'),
    userByToken: p('SELECT row FROM users WHERE token_sha256 = ?'),
    users: p('SELECT row FROM users ORDER BY name'),
    upSession: p(
      'INSERT INTO sessions (id_sha256, user, expires_at, row) VALUES (?, ?, ?, ?) ON CONFLICT (id_sha256) DO UPDATE SET expires_at = excluded.expires_at, row = excluded.row',
    ),
    getSession: p('SELECT row FROM sessions WHERE id_sha256 = ?'),
    delSession: p('DELETE FROM sessions WHERE id_sha256 = ?'),
    delExpiredSessions: p('DELETE FROM sessions WHERE expires_at <= ?'),
    insAudit: p('INSERT INTO audit (at, row) VALUES (?, ?)'),
    audit: p('SELECT id, row FROM audit WHERE id < ? ORDER BY id DESC LIMIT ?'),
    delOldAudit: p('DELETE FROM audit WHERE at < ?'),
  };
  return {
    /** The part of a commit that touches users, sessions and audit (called inside its transaction). */
    write(w: WriteSet): void {
      for (const u of w.users ?? []) s.upUser.run(u.name, u.tokenSha256, JSON.stringify(u));
      for (const x of w.sessions ?? []) s.upSession.run(x.idSha256, x.user, x.expiresAt, JSON.stringify(x));
      for (const id of w.sessionDeletes ?? []) s.delSession.run(id);
      for (const a of w.audit ?? []) s.insAudit.run(a.at, JSON.stringify(a));
    },
    getUser: (name: string) => parse<UserRow>(s.getUser.get(name) as Row | undefined),
    userByToken: (sha: string) => parse<UserRow>(s.userByToken.get(sha) as Row | undefined),
    listUsers: () => (s.users.all() as Row[]).map((r) => JSON.parse(r.row) as UserRow),
    getSession: (sha: string) => parse<SessionRow>(s.getSession.get(sha) as Row | undefined),
    listAudit: (q: { limit: number; before?: number }): AuditRow[] =>
      (s.audit.all(q.before ?? Number.MAX_SAFE_INTEGER, q.limit) as (Row & { id: number })[]).map((r) => ({
        ...(JSON.parse(r.row) as Omit<AuditRow, 'id'>),
        id: r.id,
      })),
    /** Drops expired sessions and audit entries older than `auditBefore`. */
    prune(now: number, auditBefore: number): void {
      s.delExpiredSessions.run(now);
      s.delOldAudit.run(auditBefore);
    },
  };
}
