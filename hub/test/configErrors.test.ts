import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const hub = (args: string[]) =>
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
  dir = mkdtempSync(join(tmpdir(), 'hub-config-errors-'));
  taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
  port = (taken.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => taken.close(() => r())));

describe('hub configuration errors (one loader, docs/decisions/250)', { timeout: 60_000 }, () => {
  it('names a misspelled key and a wrong type by their full key path, with what was expected and found', () => {
    const cfg = file('hub.yaml', 'listen:\n  hop: { prot: 8443 }\n  api: { port: "8080x" }\n');
    const r = hub(['config', 'check', '--config', cfg]);
    expect(r.status).toBe(2);
    const text = r.stdout + r.stderr;
    expect(text).toContain('listen.hop.prot: unknown key; did you mean listen.hop.port?');
    expect(text).toContain('listen.api.port: expected a number, found "8080x"');
    expect(text).not.toContain('Invalid input');
  });

  it('says in one line which key names a port already in use, exit 2', () => {
    const cfg = file('busy.yaml', `listen: { port: ${port} }\ndataDir: ./busy-data\n`);
    const r = hub(['run', '--config', cfg]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      `hub: listen.port: port ${port} on 127.0.0.1 is already in use; stop the program that holds it or set listen.port to a free port`,
    );
  });

  it('names the api listener when the api port of a split listen is taken', () => {
    const cfg = file(
      'busy2.yaml',
      `listen:\n  hop: { port: 0 }\n  api: { port: ${port} }\ndataDir: ./busy2-data\n`,
    );
    const r = hub(['run', '--config', cfg]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`hub: listen.api.port: port ${port} on 127.0.0.1 is already in use`);
    expect(r.stderr).not.toContain('EADDRINUSE');
  });
});
