import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/relay.js', import.meta.url));
const run = (args: string[], cwd?: string) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, LOG_LEVEL: 'info' },
  });

function relayDir(yaml: string) {
  const dir = mkdtempSync(join(tmpdir(), 'relay-config-'));
  writeFileSync(join(dir, 'up.token'), 'tok\n');
  writeFileSync(join(dir, 'relay.yaml'), yaml);
  return { dir, config: join(dir, 'relay.yaml') };
}

const LISTEN = 'name: relay-1\ndataDir: ./data\nlisten: { host: 127.0.0.1, port: 0 }\n';
const UPSTREAM = 'upstreams: [{ url: "http://127.0.0.1:8443", tokenFile: ./up.token }]\n';

describe('relay config check and schema', { timeout: 60_000 }, () => {
  it('passes a usable file, with a warning line when sites is empty (exit 0)', () => {
    const { dir, config } = relayDir(LISTEN + UPSTREAM);
    const r = run(['config', 'check', '--config', config]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`OK — relay relay-1 on 127.0.0.1:0, data in ${join(dir, 'data')}`);
    expect(r.stdout).toMatch(
      /^warning: sites is empty: this relay holds no downlink, so acks, plan requests, publications and approvals will not reach agents behind it/m,
    );
    const json = JSON.parse(run(['config', 'check', '--config', config, '--json']).stdout);
    expect(json).toMatchObject({
      ok: true,
      sites: [],
      problems: [],
      upstreams: [{ url: 'http://127.0.0.1:8443' }],
    });
    expect(json.warnings).toHaveLength(1);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('lists every problem with its key path and exits 2', () => {
    const { config } = relayDir(
      'name: Relay 1\ndataDir: ./data\nlisten: { port: 70000 }\nsites: [ship-7]\nupstreams: [{ url: "http://h:1", tokenFile: ./x, token: y }]\n',
    );
    const r = run(['config', 'check', '--config', config]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/- name: expected a slug like relay-1/);
    expect(r.stderr).toMatch(/- listen\.port: /);
    expect(r.stderr).toMatch(/- upstreams\[0\]: give exactly one of token, tokenFile, tokenEnv/);
    const { config: missing } = relayDir(
      `${LISTEN}sites: [ship-7]\nupstreams: [{ url: "http://h:1", tokenFile: ./nope.token }]\n`,
    );
    const m = run(['config', 'check', '--config', missing]);
    expect(m.status).toBe(2);
    expect(m.stderr).toMatch(/- upstreams\[0\]\.tokenFile: ENOENT: .*nope\.token/);
  });

  it('prints the JSON Schema of relay.yaml', () => {
    const r = run(['config', 'schema']);
    expect(r.status).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.required).toEqual(['name', 'dataDir', 'listen']);
    expect(s.properties.sites).toMatchObject({ type: 'array', default: [] });
    expect(s.properties.sites.description).toContain('acks, plan requests, publications, approvals');
  });
});

describe('relay from another working directory', { timeout: 60_000 }, () => {
  it('keeps its data beside its config, not where it was started', () => {
    const { dir, config } = relayDir(LISTEN + UPSTREAM);
    const elsewhere = mkdtempSync(join(tmpdir(), 'relay-cwd-'));
    const r = run(['token', 'add', 'ship-7', '--config', config, '--json'], elsewhere);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(dir, 'data', 'relay.sqlite'))).toBe(true);
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
  });

  it('starts without sites and logs a warning naming what will not reach agents', async () => {
    const { config } = relayDir(LISTEN + UPSTREAM);
    const p = spawn(process.execPath, [bin, 'run', '--config', config], {
      cwd: mkdtempSync(join(tmpdir(), 'relay-cwd-')),
      env: { ...process.env, LOG_LEVEL: 'info' },
    });
    let out = '';
    const seen = new Promise<void>((resolve, reject) => {
      const look = (d: Buffer) => {
        out += d.toString();
        if (/relay listening/.test(out) && /sites is empty/.test(out)) resolve();
      };
      p.stdout.on('data', look);
      p.stderr.on('data', look);
      p.once('exit', (code) => reject(new Error(`relay exited ${code} before warning:\n${out}`)));
    });
    try {
      await seen;
    } finally {
      p.kill('SIGTERM');
    }
    const line = out.split('\n').find((l) => l.includes('sites is empty')) ?? '';
    const entry = JSON.parse(line) as { level: number; msg: string };
    expect(entry.level).toBe(40);
    for (const what of ['acks', 'plan requests', 'publications', 'approvals'])
      expect(entry.msg).toContain(what);
    expect(await new Promise((r) => p.once('exit', r))).toBe(0);
  });
});
