import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { echoServer, open, readBytes } from './netHelpers.js';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const c of cleanups.splice(0)) await c();
});

function run(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

async function firstLine(child: ChildProcess): Promise<string> {
  const rl = createInterface({ input: child.stdout! });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  for await (const line of rl) {
    clearTimeout(timer);
    rl.close();
    return line;
  }
  throw new Error('the CLI printed nothing');
}

describe('driftline-sim CLI', () => {
  it('runs a link from flags, reports its ports as JSON, carries bytes and stops cleanly on SIGTERM', async () => {
    const echo = await echoServer();
    cleanups.push(echo.close);
    const child = run([
      'link',
      '--target',
      `127.0.0.1:${echo.port}`,
      '--profile',
      'geo',
      '--time-scale',
      '60',
      '--json',
    ]);
    const ready = JSON.parse(await firstLine(child));
    expect(ready).toMatchObject({ name: 'geo', schedule: 'always up' });
    const s = await open(ready.port);
    s.write('over the link');
    expect((await readBytes(s, 13)).toString()).toBe('over the link');
    s.destroy();
    const state = (await (await fetch(`${ready.control}/link`)).json()) as {
      settings: { uplink: { delayMs: number } };
    };
    expect(state.settings.uplink.delayMs).toBe(5);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  }, 30_000);

  it('exits 2 with a list of what is wrong', async () => {
    const child = run(['link', '--target', 'nowhere', '--profile', 'moon']);
    let err = '';
    child.stderr!.on('data', (b) => {
      err += b;
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(err).toMatch(/--target: --target must be \[host:\]port/);
    expect(err).toMatch(/--profile/);
  }, 30_000);
});
