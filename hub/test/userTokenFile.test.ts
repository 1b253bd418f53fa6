import { execFile, spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startHub, type TestHub } from './hubFixture.js';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const run = (...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

describe('hub user add --write-token', { timeout: 60_000 }, () => {
  it("writes the token alone to a new 0600 file that a CI job's --token-file uses as it is", async () => {
    const h = await startHub();
    hubs.push(h);
    const cfg = join(h.dir, 'hub.yaml');
    writeFileSync(cfg, `dataDir: ${h.dir}\n`);
    const file = join(h.dir, 'ci.token');
    const added = run(
      'user',
      'add',
      'ci',
      '--role',
      'viewer',
      '--config',
      cfg,
      '--json',
      '--write-token',
      file,
    );
    expect(added.status, added.stderr).toBe(0);
    const out = JSON.parse(added.stdout) as Record<string, unknown>;
    expect(out).toEqual({ name: 'ci', roles: ['viewer'], tokenFile: file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = readFileSync(file, 'utf8');
    expect(added.stdout).not.toContain(token.trim());
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}\n$/);

    // The file as `remote` verbs read it (--token-file): the hub (in this process, so not spawnSync) accepts it.
    const refs = await promisify(execFile)(
      process.execPath,
      [bin, 'refs', 'list', '--hub', h.url, '--token-file', file, '--json'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(JSON.parse(refs.stdout)).toHaveProperty('refs');

    // Never overwrites a file, and an SSO user has no token to write.
    const again = run('user', 'add', 'ci2', '--role', 'viewer', '--config', cfg, '--write-token', file);
    expect([again.status, again.stderr]).toEqual([2, expect.stringContaining('the file exists')]);
    const sso = run(
      'user',
      'add',
      'sam',
      '--role',
      'viewer',
      '--sso',
      '--config',
      cfg,
      '--write-token',
      `${file}.2`,
    );
    expect([sso.status, sso.stderr]).toEqual([2, expect.stringContaining('an SSO user has no token')]);
    expect(readFileSync(file, 'utf8')).toBe(token);
  });
});
