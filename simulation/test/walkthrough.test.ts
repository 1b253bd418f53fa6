/**
 * The README's deployment walk-through, run as written: every shell block after a `<!-- walkthrough -->`
 * line, in order, in one `bash -e` in an empty folder, with `DRIFTLINE` pointing at this checkout. It
 * passes when the agent's first result is on the hub's `/api/matrix` and the hub serves the dashboard. When the README and the programs
 * disagree, this fails: the README stays true.
 *
 * Ports: the examples' own (hop 8443, dashboard 8080, relay 7000) clash with other tests that bind them
 * (the Compose test publishes 8080), so by default free ports are written into the copies of the examples
 * the walk-through reads; `DRIFTLINE_WALKTHROUGH_PORTS=examples` runs on the examples' ports unchanged.
 * `DRIFTLINE_WALKTHROUGH_TERRAFORM=real` runs it with the real terraform on PATH instead of the fake.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/topology/ports.js';
import { ROOT } from '../src/topology/programs.js';
import { until } from './support.js';

/** The shell blocks the README marks as the walk-through, in order. */
export function walkthroughBlocks(readme: string): string[] {
  const blocks: string[] = [];
  const lines = readme.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== '<!-- walkthrough -->') continue;
    const open = lines[i + 1]?.trim() ?? '';
    if (!open.startsWith('```'))
      throw new Error(`README line ${i + 2}: a walkthrough marker must precede a code block`);
    const body: string[] = [];
    let j = i + 2;
    for (; j < lines.length && lines[j]?.trim() !== '```'; j++) body.push(lines[j] as string);
    blocks.push(body.join('\n'));
    i = j;
  }
  return blocks;
}

const EXAMPLE_PORTS = { hop: 8443, api: 8080, relay: 7000 };
let script: ChildProcess | null = null;
afterAll(async () => {
  if (script?.pid && script.exitCode === null) {
    const done = new Promise((r) => script?.once('exit', r));
    process.kill(-script.pid, 'SIGTERM');
    await done;
  }
});

describe("the README's deployment walk-through", () => {
  it('brings up a hub, a relay and an agent from examples/, shows the first result and judges the site by the windows declared at the hub', {
    timeout: 300_000,
  }, async () => {
    const blocks = walkthroughBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    const dir = mkdtempSync(join(tmpdir(), 'driftline-walkthrough-'));
    // DRIFTLINE as the walk-through sees it: this checkout's programs, simulator and examples, the
    // examples on the ports this run uses.
    const view = join(dir, 'driftline');
    mkdirSync(join(view, 'examples'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(view, 'node_modules'));
    symlinkSync(join(ROOT, 'simulation'), join(view, 'simulation'));
    const ports =
      process.env.DRIFTLINE_WALKTHROUGH_PORTS === 'examples'
        ? EXAMPLE_PORTS
        : { hop: await freePort(), api: await freePort(), relay: await freePort() };
    for (const f of readdirSync(join(ROOT, 'examples'))) {
      const from = join(ROOT, 'examples', f);
      if (!f.endsWith('.yaml')) {
        cpSync(from, join(view, 'examples', f), { recursive: true });
        continue;
      }
      const text = readFileSync(from, 'utf8')
        .replaceAll(`:${EXAMPLE_PORTS.hop}`, `:${ports.hop}`)
        .replaceAll(`port: ${EXAMPLE_PORTS.hop}`, `port: ${ports.hop}`)
        .replaceAll(`port: ${EXAMPLE_PORTS.api}`, `port: ${ports.api}`)
        .replaceAll(`:${EXAMPLE_PORTS.relay}`, `:${ports.relay}`)
        .replaceAll(`port: ${EXAMPLE_PORTS.relay}`, `port: ${ports.relay}`);
      writeFileSync(join(view, 'examples', f), text);
    }
    const work = join(dir, 'work');
    mkdirSync(work);
    const scriptPath = join(dir, 'walkthrough.sh');
    // `wait` keeps the shell (and the programs it started in the background) until the test stops it.
    // `DRIFTLINE_WALKTHROUGH_TERRAFORM=real`: as an operator with Terraform installed, who skips the line
    // that puts the simulator's fake first on PATH (the README says so) and plans examples/infra for real.
    const real = process.env.DRIFTLINE_WALKTHROUGH_TERRAFORM === 'real';
    const lines = blocks.join('\n').split('\n');
    const run = real ? lines.filter((l) => !l.includes('simulation/bin')) : lines;
    writeFileSync(scriptPath, `set -e\n${run.join('\n')}\nwait\n`);
    let output = '';
    script = spawn('bash', [scriptPath], {
      cwd: work,
      env: { ...process.env, DRIFTLINE: view, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    script.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    script.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const tokenFile = join(work, 'hq', 'alice.token');
    const cell = await until(
      'the agent’s first result on the hub’s /api/matrix',
      async () => {
        if (script?.exitCode !== null)
          throw new Error(`the walk-through stopped (exit ${script?.exitCode}):\n${output}`);
        if (!existsSync(tokenFile)) return undefined;
        const token = readFileSync(tokenFile, 'utf8').trim();
        const r = await fetch(`http://127.0.0.1:${ports.api}/api/matrix?site=ship-7`, {
          headers: { authorization: `Bearer ${token}` },
        });
        if (!r.ok) return undefined;
        const m = (await r.json()) as {
          cells: { component: string; runId: string | null; status: string }[];
        };
        return m.cells.find((c) => c.component === 'network' && c.runId);
      },
      180_000,
      500,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n--- walk-through output ---\n${output}`);
    });
    expect(cell.status).not.toBe('no-data');
    if (real) expect(cell.status).toBe('changes'); // terraform_data.network, to create
    expect(cell.runId).toMatch(/^[0-9A-Z]{26}$/);

    // ship-7's windows are declared only at the hub (the HQ block's `contactPlans.sites`): its agent is
    // sent them, says it holds them, and the hub judges the site by them, never overdue while it keeps
    // them (issue 58, docs/decisions/590-windows-declared-once.md).
    const token = readFileSync(tokenFile, 'utf8').trim();
    const contact = await until(
      'ship-7’s agent to hold the windows declared at the hub',
      async () => {
        const r = await fetch(`http://127.0.0.1:${ports.api}/api/sites?contains=ship-7`, {
          headers: { authorization: `Bearer ${token}` },
        });
        if (!r.ok) return undefined;
        const { sites } = (await r.json()) as {
          sites: {
            site: string;
            contact?: { source: string; windows: string[]; state: string; unconfirmed?: string[] };
          }[];
        };
        const c = sites.find((x) => x.site === 'ship-7')?.contact;
        return c && c.source === 'declared' && !c.unconfirmed?.length ? c : undefined;
      },
      240_000,
      1000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n--- walk-through output ---\n${output}`);
    });
    expect(contact.windows).toEqual(['every 2m for 1m from 2026-01-01T00:00:00Z']);
    expect(['in-window', 'waiting']).toContain(contact.state);

    // The walk-through ends at a working dashboard: `npm install` built it (the root `prepare`), so the
    // hub serves the app at /, not the text page that says how to build it.
    const page = await fetch(`http://127.0.0.1:${ports.api}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html, 'the dashboard is not built: npm install at the checkout builds ui/dist').toContain(
      '<div id="app"></div>',
    );
    const src = /<script type="module"[^>]* src="\.?(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(src, html).toBeDefined();
    const app = await fetch(`http://127.0.0.1:${ports.api}${src}`);
    expect(app.status).toBe(200);
    expect(app.headers.get('content-type')).toMatch(/javascript/);
    expect((await app.text()).length).toBeGreaterThan(10_000);
  });
});
