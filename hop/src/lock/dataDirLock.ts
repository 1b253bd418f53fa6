import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

/** What a lock file holds: who took it, when that process started (to tell a reused PID), and for what. */
interface LockBody {
  pid: number;
  /** The holder's start time as the kernel counts it (`/proc/<pid>/stat` field 22), when there is one. */
  startTicks: string | null;
  /** The directory or file the lock guards. */
  what: string;
  /** The program that holds it (`edge-agent run`, `relay run`, `hub run`). */
  program: string;
  at: string;
}

/** A held lock: `release()` removes the file (also done at exit). */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

export type LockResult =
  | { ok: true; lock: DataDirLock }
  | {
      ok: false;
      /** The holder's PID. */
      pid: number;
      /** One line a person reads: who holds what, and what to do. */
      message: string;
    };

/** Locks this process holds, released at exit (one listener however many a test process takes). */
const held = new Set<() => void>();
let exitHook = false;

/** This process's start time as the kernel counts it, or null where there is no /proc. */
function startTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null; // field 22 (starttime) is the 20th after the name
  } catch {
    return null;
  }
}

/** Whether the process that wrote `b` still runs (a PID reused by another process does not count). */
function holderAlive(b: LockBody): boolean {
  if (b.pid === process.pid) return false; // a restart that got the crashed holder's PID (PID 1 in a container)
  try {
    process.kill(b.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it runs, as another user
  }
  if (b.startTicks === null) return true;
  const now = startTicks(b.pid);
  return now === null || now === b.startTicks;
}

function readBody(path: string): LockBody | null {
  try {
    const b = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockBody>;
    return typeof b.pid === 'number' && Number.isInteger(b.pid) && b.pid > 0
      ? {
          pid: b.pid,
          startTicks: typeof b.startTicks === 'string' ? b.startTicks : null,
          what: String(b.what ?? ''),
          program: String(b.program ?? ''),
          at: String(b.at ?? ''),
        }
      : null;
  } catch {
    return null;
  }
}

/**
 * Takes the exclusive lock of one program's state (a data directory, or a SQLite file) by creating
 * `lockPath` with `O_EXCL`, holding this process's PID and start time (docs/decisions/416-one-daemon-per-data-directory.md).
 * A lock file whose holder no longer runs (a crash, a SIGKILL, a PID now used by another process) is
 * stale: it is replaced, so a restart after a crash is never blocked. The file is removed at exit.
 *
 * `what` names the guarded directory or file in the message; `program` the verb taking it.
 */
export function takeDataDirLock(lockPath: string, what: string, program: string): LockResult {
  const body: LockBody = {
    pid: process.pid,
    startTicks: startTicks(process.pid),
    what,
    program,
    at: new Date().toISOString(),
  };
  // Two rounds at most: the second after removing a stale file. A racing starter that removed it too
  // and created its own first wins; this one then sees a live holder.
  for (let round = 0; round < 2; round++) {
    let fd: number;
    try {
      fd = openSync(lockPath, 'wx', 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = readBody(lockPath);
      if (holder && holderAlive(holder))
        return {
          ok: false,
          pid: holder.pid,
          message: `${what} is in use by PID ${holder.pid} (${holder.program || 'another Driftline program'}, since ${holder.at}); stop that one first, or give this one its own data directory (lock file ${lockPath})`,
        };
      // stale (the holder is gone) or unreadable (a crash while writing it): take it over
      rmSync(lockPath, { force: true });
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(body)}\n`);
    } finally {
      closeSync(fd);
    }
    const release = () => {
      if (!held.delete(release)) return;
      // only our own file: a successor may have taken it over after we were thought dead
      if (readBody(lockPath)?.pid === process.pid) rmSync(lockPath, { force: true });
    };
    held.add(release);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => {
        for (const r of [...held]) r();
      });
    }
    return { ok: true, lock: { path: lockPath, release } };
  }
  const holder = readBody(lockPath);
  return {
    ok: false,
    pid: holder?.pid ?? 0,
    message: `${what} is in use by PID ${holder?.pid ?? '?'} (lock file ${lockPath} was taken while this one started); stop that one first`,
  };
}
