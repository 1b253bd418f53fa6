import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lockRace } from '@driftline/hop/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/relay.js', import.meta.url));
const relay = (args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });

let dir: string;
let taken: Server;
let port: number;
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-config-errors-'));
  taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
  port = (taken.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => taken.close(() => r())));

describe('relay configuration errors (one loader, docs/decisions/250)', { timeout: 60_000 }, () => {
  it('config check and run list the same problems, each by its full key path', () => {
    const cfg = file(
      'relay.yaml',
      'name: relay-1\ndataDir: ./data\nlisten: { port: "70x" }\nupstreams: [{ url: "http://127.0.0.1:1", tokenFlie: ./t }]\n',
    );
    const check = relay(['config', 'check', '--config', cfg]);
    expect(check.status).toBe(2);
    const lines = [
      'listen.port: expected a number, found "70x"',
      'upstreams[0].tokenFlie: unknown key; did you mean upstreams[0].tokenFile?',
    ];
    for (const l of lines) expect(check.stdout + check.stderr).toContain(l);
    const run = relay(['run', '--config', cfg]);
    expect(run.status).toBe(2);
    for (const l of lines) expect(run.stderr).toContain(l);
  });

  it('says in one line which key names a port already in use, exit 2', () => {
    const cfg = file('busy.yaml', `name: relay-1\ndataDir: ./busy-data\nlisten: { port: ${port} }\n`);
    const r = relay(['run', '--config', cfg]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      `relay: listen.port: port ${port} on 127.0.0.1 is already in use; stop the program that holds it or set listen.port to a free port`,
    );
  });

  it('runs one relay per data directory: a second exits 2 naming the holder; a restart after SIGKILL is not blocked', async () => {
    const own = mkdtempSync(join(tmpdir(), 'relay-lock-'));
    writeFileSync(join(own, 't'), 'token\n');
    const cfg = join(own, 'relay.yaml');
    writeFileSync(
      cfg,
      'name: relay-1\ndataDir: ./data\nlisten: { host: 127.0.0.1, port: 0 }\nupstreams: [{ url: "http://127.0.0.1:1", tokenFile: ./t }]\n',
    );
    const data = join(own, 'data');
    const r = await lockRace([process.execPath, bin, 'run', '--config', cfg], join(data, 'relay.lock'), {
      readyLine: /"msg":"relay listening"/,
    });
    expect(r.second.status).toBe(2);
    expect(r.second.stderr).toMatch(
      new RegExp(`^relay: ${data} is in use by PID ${r.firstPid} \\(relay run, since [^\\n]*\\n$`),
    );
    expect([r.restartTook, r.restartExit]).toEqual([true, 0]);
  });
});
