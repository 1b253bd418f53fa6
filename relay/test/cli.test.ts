import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/app.js';

const bin = fileURLToPath(new URL('../bin/relay.js', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

describe('relay CLI', () => {
  it('prints help with an example and exits 0', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: relay');
    expect(r.stdout).toContain('Example');
  });

  it('exits 2 on a usage error and says what was wrong', () => {
    const r = run('--no-such-flag');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown option '--no-such-flag'");
  });

  it('names a mistyped option before the required one it stands for (issue 58)', () => {
    const r = run('config', 'check', '--confg', 'relay.yaml');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown option '--confg'");
    expect(r.stderr).not.toContain('required option');
    const missing = run('config', 'check');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("required option '-c, --config <file>' not specified");
  });
});

describe('relay token and config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-cli-'));
  const cfg = join(dir, 'relay.yaml');
  writeFileSync(cfg, `name: relay-1\ndataDir: ${join(dir, 'data')}\nlisten: { port: 0 }\n`);

  it('issues a token once, stores only its hash, and revokes it', () => {
    const r = run('token', 'add', 'ship-7', '--config', cfg, '--json');
    expect(r.status).toBe(0);
    const { token } = JSON.parse(r.stdout);
    expect(token).toMatch(/^dlr_[0-9a-f]{12}_/);
    const { custody, tokens } = openStore({ dataDir: join(dir, 'data'), storage: {} });
    expect(tokens.authenticate(token)).toEqual({ name: 'ship-7', sites: ['ship-7'] });
    const raw = JSON.stringify(custody.db.prepare('SELECT * FROM tokens').all());
    // the secret is everything after `dlr_<id>_` (base64url: it may hold `_` itself)
    const secret = token.split('_').slice(2).join('_');
    expect(secret.length).toBeGreaterThan(40);
    expect(raw).not.toContain(secret);
    custody.close();
    expect(run('token', 'revoke', 'ship-7', '--config', cfg).status).toBe(0);
    const again = openStore({ dataDir: join(dir, 'data'), storage: {} });
    expect(again.tokens.authenticate(token)).toBeNull();
    again.custody.close();
    expect(run('token', 'revoke', 'ship-7', '--config', cfg).status).toBe(1);
  }, 60_000);

  it('issues a metrics-only token that reads /metrics and acts for no site', () => {
    const r = run('token', 'add', 'prometheus', '--metrics', '--config', cfg, '--json');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ name: 'prometheus', sites: [], scope: 'metrics' });
    const { custody, tokens } = openStore({ dataDir: join(dir, 'data'), storage: {} });
    expect(tokens.authenticate(out.token)).toBeNull();
    expect(tokens.mayReadMetrics(out.token)).toBe(true);
    custody.close();
    expect(run('token', 'add', 'prometheus', '--metrics', '--sites', 'ship-7', '--config', cfg).status).toBe(
      2,
    );
  }, 60_000);

  it('exits 2 with a readable list on a bad config', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'name: Not A Slug\nlisten: { port: -1 }\nupstreams: [{ url: nope }]\n');
    const r = run('run', '--config', bad);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('name: expected a slug like relay-1, found "Not A Slug"');
    expect(r.stderr).toContain('dataDir');
    expect(r.stderr).toContain('upstreams[0].url: expected a valid url, found "nope"');
  }, 30_000);
});

describe('a fresh relay store opened by several processes at once', () => {
  it('migrates once: three `token add` started together all succeed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-race-'));
    const cfg = join(dir, 'relay.yaml');
    writeFileSync(cfg, `name: relay-1\ndataDir: ${join(dir, 'data')}\nlisten: { port: 0 }\n`);
    const once = (site: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const p = spawn(process.execPath, [bin, 'token', 'add', site, '--config', cfg, '--json']);
        let stderr = '';
        p.stderr.on('data', (d) => {
          stderr += d;
        });
        p.on('close', (code) => resolve({ code, stderr }));
      });
    const results = await Promise.all(['ship-7', 'ship-8', 'ship-9'].map(once));
    expect(results).toEqual(results.map(() => ({ code: 0, stderr: expect.any(String) })));
    expect(results.map((r) => r.stderr).join('')).not.toContain('duplicate column');
  }, 60_000);
});
