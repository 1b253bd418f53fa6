import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** What a second daemon on a held data directory did, and what a restart after SIGKILL did. */
export interface LockRace {
  /** The first daemon's PID. */
  firstPid: number;
  /** The second one's exit code and its stderr. */
  second: { status: number | null; stderr: string };
  /** After the first was SIGKILLed: the restart took the lock (its PID is in the lock file). */
  restartTook: boolean;
  /** The restart's exit code after SIGTERM. */
  restartExit: number | null;
}

const lockPid = (file: string): number | null => {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { pid?: number }).pid ?? null;
  } catch {
    return null;
  }
};

async function holds(
  child: ChildProcess,
  lockFile: string,
  ms: number,
  ready: () => boolean,
): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (lockPid(lockFile) === child.pid && ready()) return true;
    if (child.exitCode !== null) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

const exited = (c: ChildProcess) =>
  c.exitCode !== null || c.signalCode !== null
    ? Promise.resolve(c.exitCode)
    : new Promise<number | null>((r) => c.once('exit', (code) => r(code)));

/**
 * Test support (real processes): starts `argv` (a daemon on one data directory) and waits until it holds
 * `lockFile` (and, with `readyLine`, has logged a line matching it: then its signal handlers are in place); runs the same command again and records how it ended; SIGKILLs the first (leaving its lock
 * file behind) and starts a third, which must take the stale lock; stops it with SIGTERM. Every wait is
 * bounded by `ms`.
 */
export async function lockRace(
  argv: string[],
  lockFile: string,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; ms?: number; readyLine?: RegExp } = {},
): Promise<LockRace> {
  const ms = opts.ms ?? 60_000;
  const env = { ...process.env, LOG_LEVEL: opts.readyLine ? 'info' : 'warn', ...opts.env };
  const ready = (err: () => string) => () => !opts.readyLine || opts.readyLine.test(err());
  const start = () =>
    spawn(argv[0]!, argv.slice(1), { env, cwd: opts.cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  const first = start();
  let firstErr = '';
  first.stderr?.on('data', (d) => {
    firstErr += d;
  });
  try {
    if (
      !(await holds(
        first,
        lockFile,
        ms,
        ready(() => firstErr),
      ))
    )
      throw new Error(`the first daemon never took ${lockFile}: ${firstErr.slice(0, 2000)}`);
    const second = spawnSync(argv[0]!, argv.slice(1), { env, cwd: opts.cwd, encoding: 'utf8', timeout: ms });
    first.kill('SIGKILL');
    await exited(first);
    const third = start();
    let thirdErr = '';
    third.stderr?.on('data', (d) => {
      thirdErr += d;
    });
    const restartTook = await holds(
      third,
      lockFile,
      ms,
      ready(() => thirdErr),
    );
    third.kill('SIGTERM');
    const killer = setTimeout(() => third.kill('SIGKILL'), ms);
    const restartExit = await exited(third);
    clearTimeout(killer);
    if (!restartTook) throw new Error(`the restart never took ${lockFile}: ${thirdErr.slice(0, 2000)}`);
    return {
      firstPid: first.pid!,
      second: { status: second.status, stderr: second.stderr },
      restartTook,
      restartExit,
    };
  } finally {
    if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
  }
}
