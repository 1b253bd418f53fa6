import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startHub, type TestHub } from './hubFixture.js';
import { AWS, refSites } from './refSetup.js';
import { sha } from './refSim.js';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));

/** `hub …` as a real process; the hub under test runs in this process, so the child is awaited, not synced. */
function hub(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, DRIFTLINE_HUB_URL: '', DRIFTLINE_TOKEN_FILE: '', ...env },
  });
  let stdout = '';
  let stderr = '';
  const waiting: Array<{ text: string; resolve: () => void }> = [];
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
    for (const w of waiting.filter((w) => stderr.includes(w.text))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
  });
  const done = new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
  /** Resolves once the child has written `text` to stderr; rejects if it exits first. */
  const said = (text: string) =>
    Promise.race([
      new Promise<void>((resolve) => {
        if (stderr.includes(text)) resolve();
        else waiting.push({ text, resolve });
      }),
      done.then((r) => {
        if (!r.stderr.includes(text))
          throw new Error(`exited ${r.status} before saying ${text}:\n${r.stderr}`);
      }),
    ]);
  return { done, stderr: () => stderr, said };
}

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

async function setUp() {
  const h = await startHub();
  hubs.push(h);
  const s = await refSites(h);
  const tokenFile = join(h.dir, 'ci.token');
  writeFileSync(tokenFile, `${s.viewer.token}\n`);
  const remote = ['--hub', h.url, '--token-file', tokenFile];
  return { h, s, remote, tokenFile };
}

describe('hub refs (remote verbs, as processes)', { timeout: 120_000 }, () => {
  it('wait exits 0 once every touched cell has a plan of the commit, polling while pending', async () => {
    const { s, remote } = await setUp();
    await s.plan('ship-8', { component: 'app', ref: 'pr/42', commit: sha('2') });
    const waiting = hub([
      'refs',
      'wait',
      '--ref',
      'pr/42',
      '--commit',
      sha('2'),
      '--timeout',
      '2m',
      '--interval',
      '1',
      ...remote,
    ]);
    // the child's first progress line
    await waiting.said('pending: 1/2 complete');
    expect(waiting.stderr()).toContain('pending: 1/2 complete');
    await s.plan('ship-9', { component: 'app', ref: 'pr/42', commit: sha('2'), status: 'clean' });
    const r = await waiting.done;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`ref pr/42 at ${sha('2').slice(0, 12)}: complete`);
  });

  it('wait exits 1 when a cell is blocked or failed, and says what it needs', async () => {
    const { s, remote } = await setUp();
    await s.plan('ship-8', {
      component: 'app',
      ref: 'pr/42',
      commit: sha('2'),
      status: 'blocked',
      needs: [AWS],
    });
    await s.plan('ship-9', { component: 'app', ref: 'pr/42', commit: sha('2') });
    const r = await hub([
      'refs',
      'wait',
      '--ref',
      'pr/42',
      '--commit',
      sha('2'),
      '--timeout',
      '30s',
      ...remote,
    ]).done;
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toContain(
      'blocked\tship-8 prod/app\tneeds registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64',
    );
    await s.plan('ship-9', { component: 'app', ref: 'pr/42', commit: sha('2'), status: 'failed' });
    const failed = await hub(['refs', 'wait', '--ref', 'pr/42', '--commit', sha('2'), '--json', ...remote])
      .done;
    expect(failed.status).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ state: 'failed', counts: { blocked: 1, failed: 1 } });
  });

  it('wait exits 2 when still pending at the timeout, on an unknown ref, a bad flag or a bad token', async () => {
    const { h, remote } = await setUp();
    const pending = await hub([
      'refs',
      'wait',
      '--ref',
      'pr/42',
      '--commit',
      sha('2'),
      '--timeout',
      '1s',
      '--interval',
      '1s',
      ...remote,
    ]).done;
    expect(pending.status).toBe(2);
    expect(pending.stdout).toContain('still pending at the timeout');
    const unknown = await hub(['refs', 'wait', '--ref', 'release/9', '--commit', sha('2'), ...remote]).done;
    expect([unknown.status, unknown.stderr]).toEqual([
      2,
      expect.stringContaining("no site plans ref 'release/9'"),
    ]);
    const bad = await hub(['refs', 'wait', '--ref', 'a..b', '--commit', sha('2'), ...remote]).done;
    expect([bad.status, bad.stderr]).toEqual([2, expect.stringContaining('may not contain ".."')]);
    const wrong = join(h.dir, 'wrong.token');
    writeFileSync(wrong, 'not-a-token');
    const denied = await hub([
      'refs',
      'wait',
      '--ref',
      'pr/42',
      '--commit',
      sha('2'),
      '--hub',
      h.url,
      '--token-file',
      wrong,
    ]).done;
    expect([denied.status, denied.stderr]).toEqual([2, expect.stringContaining('401')]);
    const noHub = await hub(['refs', 'list']).done;
    expect([noHub.status, noHub.stderr]).toEqual([2, expect.stringContaining('give --hub')]);
  });

  it('report prints a PR comment with changes, drift apart, blocked needs, failures, ages and links; list names the refs', async () => {
    const { h, s, remote } = await setUp();
    await s.plan('ship-8', { component: 'app', ref: 'pr/42', commit: sha('2'), status: 'changes' });
    await s.plan('ship-9', { component: 'app', ref: 'pr/42', commit: sha('2'), status: 'drift' });
    h.clock.advance(10 * 60_000);
    const r = await hub(['refs', 'report', '--ref', 'pr/42', '--commit', sha('2'), ...remote]).done;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('### Driftline plans of `pr/42` at `222222222222`');
    expect(r.stdout).toContain(
      '**Gate: complete** — 2 complete, 0 pending, 0 blocked, 0 failed of 2 cell(s)',
    );
    expect(r.stdout).toMatch(
      /#### Changes \(1\)[\s\S]*ship-8 · prod\/app\]\(http:\/\/[^)]*\/\?view=cell&site=ship-8&env=prod&comp=app&ref=pr%2F42\) \| \+2 ~1 −0 \| 10 min ago \|/,
    );
    expect(r.stdout).toMatch(/#### Drift: [^\n]*\(1\)[\s\S]*ship-9 · prod\/app[^\n]*\| 1 drifted \|/);
    expect(r.stdout).not.toContain('#### Blocked');

    await s.plan('ship-8', {
      component: 'app',
      ref: 'pr/42',
      commit: sha('3'),
      status: 'blocked',
      needs: [AWS],
    });
    const json = await hub([
      'refs',
      'report',
      '--ref',
      'pr/42',
      '--commit',
      sha('3'),
      '--format',
      'json',
      ...remote,
    ]).done;
    const report = JSON.parse(json.stdout) as {
      gate: { state: string };
      groups: Record<string, { site: string; needs: string[] }[]>;
    };
    expect(report.gate.state).toBe('blocked');
    expect(report.groups.blocked?.map((c) => [c.site, c.needs])).toEqual([['ship-8', [AWS]]]);
    expect(report.groups.pending?.map((c) => c.site)).toEqual(['ship-9']);

    const list = await hub(['refs', 'list', ...remote]).done;
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^pr\/42\t2 cell\(s\)\tlast planned /);
    expect(list.stdout).toContain('main\t2 cell(s)');
  });

  it('gives every refs verb --help with an example', async () => {
    for (const v of ['wait', 'report', 'list']) {
      const r = await hub(['refs', v, '--help']).done;
      expect(r.status, v).toBe(0);
      expect(r.stdout, v).toContain('Example:');
      expect(r.stdout, v).toContain('--token-file');
    }
  });
});
