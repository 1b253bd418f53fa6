/**
 * `npx tsx scripts/screenshots.ts`: the README's dashboard screenshots, taken from the demo (not by hand).
 * Starts `npm start`'s demo as a process in a scratch directory, waits until every site has delivered
 * results (or `--wait` seconds pass), lets it run `--settle` seconds more so cells have a history, signs in
 * with the printed `Sign in:` link in Debian's Chromium and
 * saves docs/screenshots/{overview,matrix,links,cell}.png. Stops the demo it started.
 *
 *   npx tsx scripts/screenshots.ts [--wait 300] [--settle 150] [--out docs/screenshots]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = '/usr/bin/chromium';
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const waitS = Number(arg('wait', '300'));
const settleS = Number(arg('settle', '150'));
const out = resolve(ROOT, arg('out', 'docs/screenshots'));
const say = (m: string) => process.stderr.write(`[screenshots] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!existsSync(CHROMIUM)) {
  say(`${CHROMIUM} is absent: install it with \`apt-get install -y chromium\``);
  process.exit(2);
}

/** Starts the demo and answers its dashboard and sign-in URLs once it prints them. */
function startDemo(dir: string): Promise<{ child: ChildProcess; hub: string; signIn: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'simulation/src/demo.ts')], {
    cwd: ROOT,
    env: { ...process.env, DRIFTLINE_DEMO_DIR: dir, DRIFTLINE_HUB_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((res, rej) => {
    let text = '';
    const timer = setTimeout(() => rej(new Error('the demo printed no sign-in link within 180 s')), 180_000);
    child.stdout?.on('data', (d: Buffer) => {
      text += d.toString();
      const hub = /^Dashboard: (\S+)/m.exec(text)?.[1];
      const signIn = /^Sign in: (\S+)/m.exec(text)?.[1];
      if (hub && signIn) {
        clearTimeout(timer);
        res({ child, hub, signIn });
      }
    });
    child.on('exit', (code) => rej(new Error(`the demo exited with ${code} before it was ready`)));
  });
}

interface Fleet {
  sites: { site: string; link: string; cells: number }[];
  attention: { kind: string; site: string; environment: string; component: string }[];
  totals: { cells: number; statusCounts: Record<string, number> };
}

async function fleet(hub: string, token: string): Promise<Fleet | null> {
  const r = await fetch(`${hub}/api/fleet`, { headers: { authorization: `Bearer ${token}` } }).catch(
    () => null,
  );
  return r?.ok ? ((await r.json()) as Fleet) : null;
}

const dir = mkdtempSync(join(tmpdir(), 'driftline-shots-'));
say(`starting the demo in ${dir}…`);
const demo = await startDemo(dir).catch((e: Error) => {
  rmSync(dir, { recursive: true, force: true });
  throw e;
});
const stop = async () => {
  if (demo.child.exitCode !== null) return;
  demo.child.kill('SIGINT');
  for (let i = 0; i < 100 && demo.child.exitCode === null; i++) await sleep(100);
  if (demo.child.exitCode === null) demo.child.kill('SIGKILL');
};
try {
  const token = new URL(demo.signIn).searchParams.get('token') ?? '';
  const deadline = Date.now() + waitS * 1000;
  let f: Fleet | null = null;
  for (;;) {
    f = await fleet(demo.hub, token);
    const waiting = f?.sites.filter((s) => s.link === 'never-heard' || s.link === 'no-plan-yet') ?? [];
    if (f && f.sites.length > 0 && waiting.length === 0) break;
    if (Date.now() > deadline) {
      say(`still without results after ${waitS} s: ${waiting.map((s) => s.site).join(', ') || 'the hub'}`);
      break;
    }
    await sleep(3000);
  }
  say(`every site has reported; letting the demo run ${settleS} s more for some history`);
  await sleep(settleS * 1000);
  f = (await fleet(demo.hub, token)) ?? f;
  say(`${f?.totals.cells ?? 0} cells; taking the shots`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 760 }, colorScheme: 'light' });
    await page.goto(demo.signIn);
    await page.getByRole('heading', { name: /Fleet overview/ }).waitFor({ timeout: 30_000 });
    mkdirSync(out, { recursive: true });
    const shot = async (name: string) => {
      await sleep(500);
      const path = join(out, `${name}.png`);
      await page.screenshot({ path });
      say(`${path}: ${Math.round(statSync(path).size / 1024)} KiB`);
    };
    await shot('overview');
    await page.goto(`${demo.hub}/?view=matrix`);
    await page.waitForFunction(
      () => !document.querySelector('.matrix-view [aria-busy]') && document.querySelector('.t-face'),
    );
    const tiles = page.locator('[role=gridcell].tile:not(.st-none)');
    await tiles.nth(Math.min(4, (await tiles.count()) - 1)).focus();
    await shot('matrix');
    await page.goto(`${demo.hub}/?view=links`);
    await page.getByRole('heading', { name: 'Links to the sites' }).waitFor();
    await shot('links');
    // the cell with the longest history (of those needing attention) shows the strip and episodes best
    const runsOf = async (a: Fleet['attention'][number]) => {
      const path = [a.site, a.environment, a.component].map(encodeURIComponent).join('/');
      const r = await fetch(`${demo.hub}/api/cells/${path}/runs`, {
        headers: { authorization: `Bearer ${token}` },
      }).catch(() => null);
      return r?.ok ? ((await r.json()) as { runs: unknown[] }).runs.length : 0;
    };
    let cell = f?.attention[0];
    let most = -1;
    for (const a of f?.attention.slice(0, 30) ?? []) {
      const n = await runsOf(a);
      if (n > most) [cell, most] = [a, n];
    }
    const site = cell?.site ?? f?.sites[0]?.site ?? '';
    const q = cell
      ? `view=cell&site=${encodeURIComponent(cell.site)}&env=${encodeURIComponent(cell.environment)}&comp=${encodeURIComponent(cell.component)}`
      : `view=site&site=${encodeURIComponent(site)}`;
    await page.goto(`${demo.hub}/?${q}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await shot('cell');
  } finally {
    await browser.close();
  }
} finally {
  await stop();
  rmSync(dir, { recursive: true, force: true });
}
