import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlanSummarySchema } from '@driftline/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixturePath, fixtureText, PLANTED_SECRETS } from './fixtures.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));
let dir: string;
const run = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    input: opts.input,
    env: { ...process.env, LOG_LEVEL: 'silent', ...opts.env },
    timeout: 60_000,
  });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-verbs-'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'infra'));
  symlinkSync(fixturePath('fake-terraform'), join(dir, 'bin', 'terraform'));
  writeFileSync(join(dir, 'hub.pub'), 'ed25519:AAAA\n');
  writeFileSync(join(dir, 'token'), 'x\n');
  writeFileSync(
    join(dir, 'agent.yaml'),
    `site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams: [{ url: "http://127.0.0.1:1", tokenFile: ./token }]
components:
  - name: network
    workingDir: ./infra
    environments: [prod, staging]
`,
  );
});

describe('edge-agent summarize', { timeout: 30_000 }, () => {
  it('prints a PlanSummary with --json, with no secret in it', () => {
    const r = run([
      'summarize',
      fixturePath('plans/v1.2-kitchen-sink.json'),
      '--json',
      '--component',
      'network',
      '--environment',
      'prod',
    ]);
    expect(r.status).toBe(0);
    const s = PlanSummarySchema.parse(JSON.parse(r.stdout));
    expect(s).toMatchObject({ component: 'network', environment: 'prod', status: 'changes' });
    for (const secret of PLANTED_SECRETS) expect(r.stdout).not.toContain(secret);
  });

  it('reads standard input with -, and prints a table without --json', () => {
    const r = run(['summarize', '-'], { input: fixtureText('plans/v1.0-tf1.1-drift-only.json') });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^unknown\/unknown: drift/);
    expect(r.stdout).toContain('drift:update');
  });

  it.each([
    ['not JSON', 'hello there', /not-a-plan: the input is not JSON/],
    ['JSON that is not a plan', '{"format_version":"1.0","values":{}}', /not-a-plan: .*state file/],
    ['a truncated plan', fixtureText('plans/v1.2-kitchen-sink.json').slice(0, 3000), /truncated/],
    ['an unknown major version', '{"format_version":"9.0","planned_values":{}}', /unsupported-format/],
  ])('exits 1 with one line on %s', (_, input, message) => {
    const r = run(['summarize', '-'], { input });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
  });

  it('refuses a file over the size limit before reading it', () => {
    const big = join(dir, 'huge.json');
    const fd = openSync(big, 'w');
    closeSync(fd);
    spawnSync('truncate', ['-s', '300M', big]);
    const r = run(['summarize', big]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/larger than the 128\.0 MiB limit; refusing to read it/);
    const small = run(['summarize', fixturePath('plans/v1.2-kitchen-sink.json'), '--max-bytes', '100']);
    expect(small.status).toBe(1);
  });

  it('names a mistyped option before the required one it stands for (issue 58)', () => {
    // one verb: the check is the program's, for every verb (@driftline/hop/cli)
    const r = run(['status', '--confg', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown option '--confg'");
    const missing = run(['status']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("required option '--config <file>' not specified");
  });

  it('exits 2 on a usage error', () => {
    expect(run(['summarize']).status).toBe(2);
    expect(run(['summarize', 'x', '--max-bytes', 'lots']).status).toBe(2);
  });
});

describe('edge-agent plan and config check', { timeout: 30_000 }, () => {
  const env = () => ({
    PATH: `${dir}/bin:${process.env.PATH}`,
    FAKE_TF_PLAN_JSON: fixturePath('plans/v1.2-kitchen-sink.json'),
  });

  it('runs one cell now and prints its summary as JSON', () => {
    const r = run(
      [
        'plan',
        '--config',
        join(dir, 'agent.yaml'),
        '--component',
        'network',
        '--environment',
        'prod',
        '--json',
      ],
      { env: env() },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as unknown[];
    expect(out).toHaveLength(1);
    expect(PlanSummarySchema.parse(out[0])).toMatchObject({ environment: 'prod', status: 'changes' });
  });

  it('runs every configured cell, and exits 1 when one is locked', () => {
    const r = run(['plan', '--config', join(dir, 'agent.yaml'), '--json'], {
      env: { ...env(), FAKE_TF_SCENARIO: 'lock' },
    });
    expect(r.status).toBe(1);
    expect((JSON.parse(r.stdout) as { status: string }[]).map((s) => s.status)).toEqual(['locked', 'locked']);
  });

  it('exits 2 for a cell the config does not list, or a bad config', () => {
    const r = run(['plan', '--config', join(dir, 'agent.yaml'), '--component', 'nope'], { env: env() });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('configured: network/prod, network/staging');
    writeFileSync(join(dir, 'bad.yaml'), 'site: ship-7\n');
    expect(run(['plan', '--config', join(dir, 'bad.yaml')]).status).toBe(2);
  });

  it('config check lists problems by key path and exits 2, or says OK', () => {
    writeFileSync(join(dir, 'bad.yaml'), 'site: Ship 7\nagent: a1\n');
    const bad = run(['config', 'check', '--config', join(dir, 'bad.yaml')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/- site: site id must be/);
    expect(bad.stderr).toMatch(/- components: /);
    // config check also parses the pinned key and finds the tool: a real key, and the fake on PATH.
    writeFileSync(join(dir, 'hub.pub'), 'ed25519:lrF3pwuGnJ6mZQsKmoWVHO3zn1Yi683wSjDanFjASqs\n');
    const good = run(['config', 'check', '--config', join(dir, 'agent.yaml'), '--json'], { env: env() });
    expect(good.status).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({
      ok: true,
      site: 'ship-7',
      agent: 'a1',
      cells: ['prod/network', 'staging/network'],
      problems: [],
    });
  });
});
