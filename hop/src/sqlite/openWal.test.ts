import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateLocked, openWalDatabase, retryBusy, userVersion } from './openWal.js';

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

describe('retryBusy', () => {
  it('tries again while the call fails with SQLITE_BUSY, then returns its value', () => {
    let calls = 0;
    const v = retryBusy(() => {
      if (++calls < 3) throw busy();
      return 'opened';
    }, 5_000);
    expect([v, calls]).toEqual(['opened', 3]);
  });

  it('passes any other error through at once', () => {
    let calls = 0;
    expect(() =>
      retryBusy(() => {
        calls++;
        throw Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' });
      }),
    ).toThrow(/not a database/);
    expect(calls).toBe(1);
  });

  it('gives up with the SQLITE_BUSY error once the time is spent', () => {
    let t = 0;
    let calls = 0;
    const now = () => t;
    expect(() =>
      retryBusy(
        () => {
          calls++;
          t += 400;
          throw busy();
        },
        1_000,
        now,
      ),
    ).toThrow(/locked/);
    expect(calls).toBe(3);
  });
});

describe('openWalDatabase', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('opens a new file in WAL mode with the asked synchronous level and busy timeout', () => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-wal-'));
    const db = openWalDatabase(join(dir, 's.db'), { synchronous: 'FULL', timeoutMs: 1234 });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(1234);
    db.close();
  });

  it('waits out another connection holding the file exclusively for less than its timeout', () => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-wal-'));
    const path = join(dir, 's.db');
    const holder = new Database(path);
    holder.pragma('locking_mode = EXCLUSIVE');
    holder.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    expect(() => openWalDatabase(path, { synchronous: 'NORMAL', timeoutMs: 50 })).toThrow(/locked/);
    holder.close();
    const db = openWalDatabase(path, { synchronous: 'NORMAL', timeoutMs: 50 });
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 });
    db.close();
  });

  it('migrates step by step to the version asked, then takes no write lock once up to date', () => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-wal-'));
    const path = join(dir, 's.db');
    const steps = ['CREATE TABLE a (x)', 'CREATE TABLE b (x)', 'CREATE TABLE c (x)'];
    const db = openWalDatabase(path, { synchronous: 'NORMAL', timeoutMs: 50 });
    migrateLocked(db, steps, userVersion(db), 2);
    expect(userVersion(db).get()).toBe(2);
    migrateLocked(db, steps);
    expect(userVersion(db).get()).toBe(3);
    const writer = openWalDatabase(path, { synchronous: 'NORMAL', timeoutMs: 50 });
    writer.exec('BEGIN IMMEDIATE');
    expect(() => migrateLocked(db, steps)).not.toThrow(); // up to date: no lock needed
    expect(() => migrateLocked(db, [...steps, 'CREATE TABLE d (x)'])).toThrow(/locked/);
    writer.exec('ROLLBACK');
    writer.close();
    db.close();
  });

  it('lets six processes open, write and close one fresh store over and over without a failure', async () => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-wal-'));
    const path = join(dir, 'shared.db');
    const script = fileURLToPath(new URL('../../test/fixtures/openMany.ts', import.meta.url));
    const run = promisify(execFile);
    const outs = await Promise.all(
      Array.from({ length: 6 }, () => run(process.execPath, ['--import', 'tsx', script, path, '15'])),
    );
    expect(outs.map((o) => JSON.parse(o.stdout) as { failed: number })).toEqual(
      Array.from({ length: 6 }, () => ({ failed: 0 })),
    );
    const db = openWalDatabase(path, { synchronous: 'NORMAL' });
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 90 });
    db.close();
  }, 120_000);
});
