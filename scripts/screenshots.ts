/**
 * `npx tsx scripts/screenshots.ts`: the README's dashboard screenshots, taken from the demo (not by hand).
 * Starts `npm start`'s demo as a process in a scratch directory, with the state lock of one cell held
 * (`DRIFTLINE_DEMO_HOLD_LOCK=ship-7/prod/database`: that cell's fake terraform answers Terraform's lock
 * error from its third plan on, so it goes `stuck-lock`), waits until every site has delivered results
 * (or `--wait` seconds pass), lets it run `--settle` seconds more so cells have a history, signs in with
 * the printed `Sign in:` link in Debian's Chromium and saves in docs/screenshots:
 *
 *   overview.png, matrix.png, links.png, cell.png   the fleet overview, matrix, links and a cell's history
 *   stuck-lock.png        the held-lock cell once stuck: Lock Info and the `force-unlock` command
 *   plan-request-*.png    "Plan now" pressed on a polar-1 cell, a shot each time its journey adds a step
 *                         (asked, at-relay, delivered, running: those the link lets it catch; the
 *                         request waits at the relay for polar-1's next contact window, up to 4 min)
 *   plan-request.png      that request done, every step with its time
 *   silent-relay.png      the overview while the demo's relay is suspended (SIGSTOP) until the hub calls
 *                         it silent (no status for 5 minutes, docs/operations.md); resumed afterwards
 *
 * Stops the demo it started. Takes about 15 minutes (the silent relay alone takes 5).
 *
 *   npx tsx scripts/screenshots.ts [--wait 300] [--settle 150] [--out docs/screenshots]
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { say, sleep, startDemo, stopDemo } from './screenshots/demo.js';
import { type Cell, cellQuery, type Fleet, HubApi } from './screenshots/hubApi.js';
import { shootPlanRequest, shootSilentRelay, shootStuckLock } from './screenshots/moments.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = '/usr/bin/chromium';
/** The cell whose state lock the demo holds (ship-7 plans every 30 s: stuck within two minutes). */
const HELD_LOCK: Cell = { site: 'ship-7', environment: 'prod', component: 'database' };
/** The cell "Plan now" is pressed on: polar-1's request waits at the relay for its contact window. */
const PLAN_NOW: Cell = { site: 'polar-1', environment: 'staging', component: 'network' };
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const waitS = Number(arg('wait', '300'));
const settleS = Number(arg('settle', '150'));
const out = resolve(ROOT, arg('out', 'docs/screenshots'));
const sameCell = (a: Cell, b: Cell) =>
  a.site === b.site && a.environment === b.environment && a.component === b.component;

if (!existsSync(CHROMIUM)) {
  say(`${CHROMIUM} is absent: install it with \`apt-get install -y chromium\``);
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'driftline-shots-'));
say(`starting the demo in ${dir}…`);
const demo = await startDemo(ROOT, dir, {
  DRIFTLINE_DEMO_HOLD_LOCK: `${HELD_LOCK.site}/${HELD_LOCK.environment}/${HELD_LOCK.component}`,
}).catch((e: Error) => {
  rmSync(dir, { recursive: true, force: true });
  throw e;
});
const api = new HubApi(demo.hub, demo.token);
try {
  const deadline = Date.now() + waitS * 1000;
  let f: Fleet | null = null;
  for (;;) {
    f = await api.fleet();
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
  f = (await api.fleet()) ?? f;
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
    // a step a run does not catch leaves no shot of an earlier run behind
    for (const old of readdirSync(out).filter((n) => n.startsWith('plan-request-'))) rmSync(join(out, old));
    const save = (name: string, png: Buffer) => {
      const path = join(out, `${name}.png`);
      writeFileSync(path, png);
      say(`${path}: ${Math.round(png.length / 1024)} KiB`);
    };
    const shot = async (name: string) => {
      await sleep(500);
      save(name, await page.screenshot());
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
    // the cell with the longest history (of those needing attention) shows the strip and episodes best;
    // the held lock has its own shot
    let cell = f?.attention.find((a) => !sameCell(a, HELD_LOCK));
    let most = -1;
    for (const a of f?.attention.slice(0, 30) ?? []) {
      if (sameCell(a, HELD_LOCK)) continue;
      const n = (await api.runs(a)).length;
      if (n > most) [cell, most] = [a, n];
    }
    const site = cell?.site ?? f?.sites[0]?.site ?? '';
    await page.goto(`${demo.hub}/?${cell ? cellQuery(cell) : `view=site&site=${encodeURIComponent(site)}`}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await shot('cell');
    await shootStuckLock(page, api, HELD_LOCK, shot);
    const caught = await shootPlanRequest(page, api, PLAN_NOW, shot, save);
    say(`plan request: shot at ${caught.join(', ') || 'no step'}`);
    await shootSilentRelay(page, api, demo.child.pid ?? 0, shot);
  } finally {
    await browser.close();
  }
} finally {
  await stopDemo(demo.child);
  rmSync(dir, { recursive: true, force: true });
}
