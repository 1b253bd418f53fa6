import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const say = (m: string) => process.stderr.write(`[screenshots] ${m}\n`);

/** The demo as a process: its dashboard, sign-in link and admin token. */
export interface Demo {
  child: ChildProcess;
  hub: string;
  signIn: string;
  token: string;
}

/**
 * Starts `npm start`'s demo (simulation/src/demo.ts) in `dir` and answers once it prints its dashboard and
 * sign-in lines; `env` adds to its environment (DRIFTLINE_DEMO_HOLD_LOCK, say).
 */
export function startDemo(root: string, dir: string, env: Record<string, string>): Promise<Demo> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'simulation/src/demo.ts')], {
    cwd: root,
    env: { ...process.env, DRIFTLINE_DEMO_DIR: dir, DRIFTLINE_HUB_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((res, rej) => {
    let text = '';
    const timer = setTimeout(() => rej(new Error('the demo printed no sign-in link within 180 s')), 180_000);
    child.stdout?.on('data', (d: Buffer) => {
      text += d.toString();
      const hub = /^Dashboard: (\S+)/m.exec(text)?.[1];
      const signIn = /^Sign in: (\S+)/m.exec(text)?.[1];
      if (hub && signIn) {
        clearTimeout(timer);
        res({ child, hub, signIn, token: new URL(signIn).searchParams.get('token') ?? '' });
      }
    });
    child.on('exit', (code) => rej(new Error(`the demo exited with ${code} before it was ready`)));
  });
}

/** Stops the demo as Ctrl-C does (it stops its programs), SIGKILL after 10 s. */
export async function stopDemo(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGINT');
  for (let i = 0; i < 100 && child.exitCode === null; i++) await sleep(100);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/**
 * The pid of the relay the demo runs: its child process running `relay/bin/relay.js run` (Linux: read
 * from /proc), or null.
 */
export function relayPid(demoPid: number): number | null {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // the parent pid is the 4th field of /proc/<pid>/stat, after the parenthesised command
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== demoPid) continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('relay/bin/relay.js')) && argv.includes('run')) return Number(name);
    } catch {
      // the process ended while it was read
    }
  }
  return null;
}
