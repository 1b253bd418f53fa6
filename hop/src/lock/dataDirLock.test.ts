import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { takeDataDirLock } from './dataDirLock.js';

const dir = () => mkdtempSync(join(tmpdir(), 'driftline-lock-'));

/** A PID that ran and is gone: a child that has exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid;

describe('takeDataDirLock', () => {
  it('takes a free lock, writes its PID, and removes the file on release', () => {
    const d = dir();
    const r = takeDataDirLock(join(d, 'x.lock'), d, 'test');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(JSON.parse(readFileSync(join(d, 'x.lock'), 'utf8'))).toMatchObject({ pid: process.pid, what: d });
    r.lock.release();
    expect(existsSync(join(d, 'x.lock'))).toBe(false);
  });

  it('refuses a lock a live process holds, naming its PID and the directory', () => {
    const d = dir();
    // the parent of this test process is alive and is not this process
    writeFileSync(
      join(d, 'x.lock'),
      JSON.stringify({ pid: process.ppid, startTicks: null, program: 'relay run' }),
    );
    const r = takeDataDirLock(join(d, 'x.lock'), d, 'test');
    expect(r).toMatchObject({ ok: false, pid: process.ppid });
    if (r.ok) return;
    expect(r.message).toContain(`${d} is in use by PID ${process.ppid} (relay run`);
    expect(r.message).not.toContain('\n');
  });

  it('takes over a stale lock: a dead holder, a PID reused by another process, a torn file', () => {
    const d = dir();
    const f = join(d, 'x.lock');
    for (const body of [
      { pid: deadPid(), startTicks: null },
      { pid: process.ppid, startTicks: 'not-its-start-time' },
      'torn {',
    ]) {
      writeFileSync(f, typeof body === 'string' ? body : JSON.stringify(body));
      const r = takeDataDirLock(f, d, 'test');
      expect(r.ok).toBe(true);
      if (r.ok) r.lock.release();
    }
  });
});
