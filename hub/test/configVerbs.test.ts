import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const shippedUi = fileURLToPath(new URL('../../ui/dist', import.meta.url));
const run = (args: string[], cwd?: string) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });

describe('hub config check and schema', { timeout: 60_000 }, () => {
  it('resolves paths from the config folder, wherever it is run from, and serves the shipped dashboard by default', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-config-'));
    const config = join(dir, 'hub.yaml');
    writeFileSync(config, 'listen:\n  hop: { port: 8443 }\n  api: { port: 8080 }\n');
    const elsewhere = mkdtempSync(join(tmpdir(), 'hub-cwd-'));
    const r = run(['config', 'check', '--config', config, '--json'], elsewhere);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      ok: true,
      listen: { hop: '127.0.0.1:8443', api: '127.0.0.1:8080' },
      dataDir: join(dir, 'hub-data'),
      uiDir: shippedUi,
      problems: [],
    });
    // Before `hub init` the check says so, and creates nothing.
    expect(out.warnings).toContainEqual(expect.stringMatching(/^dataDir: no store at .* yet; `hub init`/));
    expect(existsSync(join(dir, 'hub-data'))).toBe(false);

    expect(run(['init', '--config', config], elsewhere).status).toBe(0);
    expect(existsSync(join(dir, 'hub-data', 'hub.db'))).toBe(true);
    expect(existsSync(join(elsewhere, 'hub-data'))).toBe(false);
    const human = run(['config', 'check', '--config', config], elsewhere);
    expect(human.status).toBe(0);
    expect(human.stdout).toContain('OK — hop API on 127.0.0.1:8443, dashboard and /api on 127.0.0.1:8080');
    expect(human.stdout).toMatch(
      /^warning: no users: nobody can sign in; add one with `hub user add NAME --role admin`$/m,
    );
  });

  it('warns when uiDir holds no dashboard, and lists every problem by key path with exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-config-'));
    mkdirSync(join(dir, 'ui'));
    writeFileSync(join(dir, 'hub.yaml'), 'uiDir: ./ui\n');
    const ok = run(['config', 'check', '--config', join(dir, 'hub.yaml')]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain(`warning: uiDir: no dashboard at ${join(dir, 'ui')}`);
    writeFileSync(
      join(dir, 'bad.yaml'),
      'listen: { port: -1 }\napi: { sso: { header: X-Forwarded-User } }\nuiDirr: x\n',
    );
    const bad = run(['config', 'check', '--config', join(dir, 'bad.yaml')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/problem\(s\):/);
    expect(bad.stderr).toMatch(/- listen/);
    expect(bad.stderr).toMatch(/uiDirr/);
  });

  it('prints the JSON Schema of hub.yaml', () => {
    const r = run(['config', 'schema']);
    expect(r.status).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(s.properties.listen.anyOf).toHaveLength(2);
    expect(s.properties.uiDir.description).toMatch(/ships with the hub/);
  });
});
