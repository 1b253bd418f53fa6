import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../src/topology/programs.js';
import {
  DEMO_COMPONENTS,
  DEMO_ENVIRONMENTS,
  DEMO_PR_REF,
  DEMO_SITES,
  DEMO_SOURCE,
} from '../src/topology/spec.js';
import { until } from './support.js';

type Cell = {
  site: string;
  environment: string;
  component: string;
  status: string;
  runId: string | null;
  ref?: string | null;
  commit?: string | null;
};

/**
 * `npm start` as a person runs it: the demo process prints where the dashboard is and how to sign in,
 * and every site of its fleet, polar and Mars included, delivers results over its harsh link.
 */
describe('npm start (the demo)', { timeout: 900_000 }, () => {
  let demo: ChildProcess;
  let out = '';
  let dir: string;
  const exited = () => demo.exitCode !== null || demo.signalCode !== null;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-demo-'));
    demo = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'simulation', 'src', 'demo.ts')], {
      cwd: ROOT,
      // As a person runs `npm start`: from source, not the offline package the other end-to-end tests use.
      env: { ...process.env, DRIFTLINE_DEMO_DIR: dir, LOG_LEVEL: 'warn', DRIFTLINE_EDGE_PACKAGE: 'source' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    demo.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    // The last of stderr, to say why when the demo dies before it is up.
    let err = '';
    demo.stderr?.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    await until(
      'the demo to print its sign-in link (or exit)',
      async () => exited() || /^(PR plans|warning: publishing): .*$/m.test(out),
      // 600 s: beside a whole run on a slow machine 300 s was short once (the demo builds, starts eight
      // programs and plans a PR before this line)
      600_000,
      500,
    );
    if (exited()) throw new Error(`the demo exited (${demo.exitCode ?? demo.signalCode}):\n${out}\n${err}`);
  }, 620_000);

  afterAll(async () => {
    if (demo && !exited()) {
      const done = new Promise((r) => demo.once('exit', r));
      demo.kill('SIGINT');
      await done;
    }
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('prints the dashboard, relay and sign-in lines as they always were', () => {
    expect(out).toMatch(/^Dashboard: http:\/\/127\.0\.0\.1:\d+$/m);
    expect(out).toMatch(/^Relay: http:\/\/127\.0\.0\.1:\d+$/m);
    expect(out).toMatch(/^Sign in: http:\/\/127\.0\.0\.1:\d+\/\?token=[^\s]+$/m);
  });

  it('runs a fleet in which every site delivers results', async () => {
    const hub = /^Dashboard: (\S+)$/m.exec(out)?.[1];
    const token = decodeURIComponent(/^Sign in: \S+\?token=(\S+)$/m.exec(out)?.[1] ?? '');
    const matrix = async () => {
      const r = await fetch(`${hub}/api/matrix`, { headers: { authorization: `Bearer ${token}` } });
      return r.ok ? ((await r.json()) as { cells: Cell[] }).cells : undefined;
    };
    const perSite = (site: string) =>
      DEMO_COMPONENTS.length * DEMO_ENVIRONMENTS.length +
      (site === DEMO_SOURCE.site ? DEMO_SOURCE.environments.length : 0);
    // Bounded wait, not a speed check: polar is in contact 40 s of every 240 s, Mars is 12 s away.
    const cells = await until(
      'results from every demo site',
      async () => {
        const c = await matrix();
        const done = DEMO_SITES.every((s) => c?.some((x) => x.site === s.site && x.runId));
        return done ? c : undefined;
      },
      600_000,
      1000,
    );
    for (const s of DEMO_SITES) {
      const mine = cells.filter((x) => x.site === s.site);
      expect(mine.length, `cells at ${s.site}`).toBe(perSite(s.site));
      expect(
        mine.some((x) => x.runId),
        `results at ${s.site}`,
      ).toBe(true);
    }
  });

  it('shows an open PR besides main: the delivered component planned at both refs', async () => {
    const line = /^PR plans: (\S+)/m.exec(out)?.[1] ?? '';
    expect(line).toMatch(new RegExp(`/\\?ref=${DEMO_PR_REF.replace('/', '\\/')}$`));
    const hub = /^Dashboard: (\S+)$/m.exec(out)?.[1];
    const token = decodeURIComponent(/^Sign in: \S+\?token=(\S+)$/m.exec(out)?.[1] ?? '');
    const get = async (path: string) => {
      const r = await fetch(`${hub}${path}`, { headers: { authorization: `Bearer ${token}` } });
      return r.ok ? ((await r.json()) as { cells: Cell[] }).cells : [];
    };
    const planned = (cells: Cell[]) =>
      cells.find((c) => c.site === DEMO_SOURCE.site && c.component === DEMO_SOURCE.name && c.commit);
    const pr = await until(
      'the PR to be planned',
      async () => planned(await get(`/api/matrix?ref=${encodeURIComponent(DEMO_PR_REF)}`)),
      600_000,
      1000,
    );
    const main = await until(
      'main to be planned',
      async () => planned(await get('/api/matrix')),
      600_000,
      1000,
    );
    expect(pr).toMatchObject({ ref: DEMO_PR_REF, status: 'changes' });
    expect(main).toMatchObject({ ref: 'main', status: 'changes' });
    expect(pr.commit).not.toBe(main.commit);

    // The printed command approves main's plan; ship-7 applies it and plans clean.
    const approve = /^Approve: npx hub approve (.+?) {3}\(/m.exec(out)?.[1];
    expect(approve).toBeTruthy();
    const args = (approve as string).split(' ').map((a) => (a === '<runId>' ? (main.runId as string) : a));
    const r = spawnSync(process.execPath, [join(ROOT, 'hub', 'bin', 'hub.js'), 'approve', ...args], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    await until(
      'the approved plan to be applied and the cell to plan clean',
      async () =>
        (await get('/api/matrix')).some(
          (c) => c.component === DEMO_SOURCE.name && c.ref === 'main' && c.status === 'clean',
        ),
      600_000,
      1000,
    );
  });
});
