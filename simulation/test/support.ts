import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { commandFor, runProgram } from '../src/topology/programs.js';

/** Polls `f` until it returns something truthy, at most `ms`; errors inside count as "not yet". */
export async function until<T>(
  what: string,
  f: () => Promise<T | undefined | false>,
  ms = 90_000,
  stepMs = 250,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Driftline programs started by a test, stopped (SIGTERM, in reverse order) by `stopAll`. */
export class ProcessGroup {
  private readonly procs = new Set<ChildProcess>();

  start(bin: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess {
    const c = commandFor(bin); // the packaged agent and relay when the global set-up unpacked one
    const p = spawn(c.cmd, [...c.args, ...args], {
      ...opts,
      env: { ...process.env, LOG_LEVEL: 'warn', DRIFTLINE_EXIT_WITH_PARENT: '1', ...opts.env },
      stdio: 'ignore',
    });
    this.procs.add(p);
    p.once('exit', () => this.procs.delete(p));
    return p;
  }

  async stop(p: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (p.exitCode !== null || p.signalCode !== null) return;
    const done = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await done;
  }

  async stopAll(): Promise<void> {
    for (const p of [...this.procs].reverse()) await this.stop(p);
  }
}

/**
 * A hub set up through its CLI as an operator would: config, init, its public key, a relay token, and
 * an admin user whose token `api` sends as `Authorization: Bearer …` on calls to the hub's `/api`.
 */
export async function setUpHub(dir: string, port: number, relay: { name: string; sites: string[] }) {
  const config = join(dir, 'hub.yaml');
  writeFileSync(config, stringify({ listen: { port }, dataDir: './hub-data', sweepIntervalS: 1 }));
  await runProgram('hub', ['init', '--config', config]);
  const key = (await runProgram('hub', ['key', '--config', config])).trim();
  const args = [
    'peer',
    '--config',
    config,
    '--name',
    relay.name,
    '--sites',
    relay.sites.join(','),
    '--no-key',
    '--json',
  ];
  const relayToken = (JSON.parse(await runProgram('hub', args)) as { token: string }).token;
  const user = ['user', 'add', 'test-admin', '--role', 'admin', '--config', config, '--json'];
  const adminToken = (JSON.parse(await runProgram('hub', user)) as { token: string }).token;
  const url = `http://127.0.0.1:${port}`;
  return { config, key, relayToken, adminToken, url, api: hubApi(url, adminToken) };
}

/** `fetch` on the hub at `url` (`path` from `/api`) as the user whose token is `token`. */
export function hubApi(url: string, token: string) {
  return (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
    });
}
