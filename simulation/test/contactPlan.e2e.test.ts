import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FleetResponse, MatrixCell } from '@driftline/protocol';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../src/topology/programs.js';
import { demoSpec } from '../src/topology/spec.js';
import { Topology } from '../src/topology/Topology.js';
import { until } from './support.js';

/**
 * The `npm start` demo in Debian's Chromium, as an operator at headquarters sees it: polar-1 declares its
 * passes (40 s of every 240 s, time-compressed), so between passes its cells read "waiting for window"
 * with the next window's time and the overview gives the site one row; after its link is cut by the
 * link's control API, the next pass that goes by without contact turns them `overdue` (issue 32).
 */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.DRIFTLINE_REQUIRE_BROWSER === '1';
const REASON = `SKIPPED: ${CHROMIUM} is not installed (apt-get install chromium); set DRIFTLINE_REQUIRE_BROWSER=1 to make this a failure`;
if (!hasChromium) console.warn(`\n\n!!! contact plan e2e ${REASON}\n\n`);
const SHOTS = join(ROOT, '.driftline', 'e2e');
// One polar cycle is 240 s: first results, the gap after them, a cut, the next pass and its grace fit in 7.
const CYCLE_MS = 240_000;

describe.runIf(hasChromium || required)(
  'contact plans on the demo, in a browser',
  { timeout: 900_000 },
  () => {
    let topo: Topology;
    let browser: Browser;
    let page: Page;
    const api = <T>(path: string) =>
      fetch(`${topo.hubUrl}${path}`, { headers: topo.authHeaders }).then((r) => r.json() as Promise<T>);
    const polarSite = async () =>
      (await api<FleetResponse>('/api/fleet')).sites.find((s) => s.site === 'polar-1');

    beforeAll(async () => {
      if (!hasChromium) throw new Error(REASON);
      const build = spawnSync('npm', ['run', 'build', '-w', '@driftline/ui'], { cwd: ROOT, stdio: 'ignore' });
      if (build.status !== 0) throw new Error('the dashboard did not build (npm run build -w @driftline/ui)');
      const dir = mkdtempSync(join(tmpdir(), 'driftline-contact-'));
      topo = await Topology.start({ ...demoSpec(dir), uiDir: join(ROOT, 'ui', 'dist') });
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync'],
      });
      page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      // beside a whole run on a slow machine a locator's default 30 s ran out once
      page.setDefaultTimeout(60_000);
      await page.goto(topo.signInUrl);
      await until(
        'the sign-in to land on the dashboard',
        async () => page.url() === `${topo.hubUrl}/`,
        20_000,
      );
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      await topo?.stop();
    }, 120_000);

    it('reads polar-1 as waiting for its window between passes, with one overview row for the site', async () => {
      const plan = await until(
        'polar-1 to declare its passes',
        async () => {
          const c = (await polarSite())?.contact;
          return c?.source === 'declared' && c;
        },
        2 * CYCLE_MS,
        1000,
      );
      expect(plan).toMatchObject({ source: 'declared', judged: true });
      expect(plan.windows[0]).toMatch(/^every 4m for 40s from /);
      await until(
        'polar-1 results, then the gap after its pass',
        async () => {
          const cells = (await api<{ cells: MatrixCell[] }>('/api/matrix?site=polar-1')).cells;
          const s = await polarSite();
          return cells.some((c) => c.runId) && s?.contact?.state === 'waiting' && s.link === 'waiting';
        },
        2 * CYCLE_MS,
        1000,
      );
      await page.goto(`${topo.hubUrl}/`);
      const silent = page.getByRole('list', { name: 'Silent sites' });
      await expect
        .poll(() => silent.getByRole('listitem').allTextContents(), { timeout: 60_000 })
        .toEqual([expect.stringMatching(/^◌ silent polar-1: \d+ cells, waiting for window in \d+ (s|min)$/)]);
      const attention = page.getByRole('region', { name: /Needs attention/ });
      // Its silence is that one row: no stale row per cell (its failures and drift stay listed, as facts).
      expect(await attention.locator('li.att-stale', { hasText: 'polar-1' }).count()).toBe(0);
      expect(await attention.locator('li.att-silent', { hasText: 'polar-1' }).count()).toBe(1);
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, 'contact-waiting-overview.png'), fullPage: true });
      await page.goto(`${topo.hubUrl}/?view=matrix&site=polar-1`);
      const grid = page.getByRole('grid');
      await expect
        .poll(() => grid.textContent(), { timeout: 60_000 })
        .toMatch(/waiting for window · (next in \d+ (s|min)|opens now)/);
      expect((await grid.textContent()) ?? '').not.toContain('site unreachable');
      await page.screenshot({ path: join(SHOTS, 'contact-waiting-matrix.png'), fullPage: true });
    });

    it('turns polar-1 overdue at the next pass that goes by after its link is cut', async () => {
      const link = topo.links.get('polar-1');
      if (!link?.control.url) throw new Error('polar-1 has no link control API');
      // Cut as an operator's tooling would: through the link's control API.
      const cut = await fetch(`${link.control.url}/link/down`, { method: 'POST' });
      expect(cut.ok).toBe(true);
      const cutAt = Date.now();
      const before = await polarSite();
      const nextEnd = Date.parse(before?.contact?.nextWindowEndsAt ?? '');
      await until(
        'polar-1 to be overdue',
        async () => (await polarSite())?.contact?.state === 'overdue',
        2 * CYCLE_MS,
        1000,
      );
      // Not before the pass it missed had ended, with its grace (30 s in the demo's hub config).
      expect(Date.now()).toBeGreaterThanOrEqual(Math.min(nextEnd, cutAt + CYCLE_MS));
      await page.goto(`${topo.hubUrl}/?view=matrix&site=polar-1`);
      const grid = page.getByRole('grid');
      await expect.poll(() => grid.textContent(), { timeout: 60_000 }).toContain('overdue · ');
      await page.goto(`${topo.hubUrl}/?view=links`);
      // The links table's own row: the relays table below names polar-1 among relay-1's sites too.
      const row = page
        .getByRole('table', { name: /Each site's link/ })
        .getByRole('row', { name: /^polar-1/ });
      // one window missed, or two where the machine was slow enough for the next pass to go by as well
      // (a whole run once took 390 s from the cut to this row, and the row was not there: what the page
      // showed instead goes into the failure and a screenshot)
      await expect
        .poll(() => row.textContent(), { timeout: 60_000 })
        .toMatch(/overdue: (1 window|2 windows) passed without contact/)
        .catch(async (e: Error) => {
          await page.screenshot({ path: join(SHOTS, 'contact-overdue-links-failed.png'), fullPage: true });
          const shown =
            (await page
              .locator('main')
              .textContent({ timeout: 5000 })
              .catch(() => null)) ?? '';
          throw new Error(`${e.message}\n--- the page showed ---\n${shown.slice(0, 3000)}`);
        });
      await page.screenshot({ path: join(SHOTS, 'contact-overdue-links.png'), fullPage: true });
    });
  },
);

if (!hasChromium && !required) {
  describe('contact plans on the demo, in a browser', () => {
    it.skip(REASON, () => {});
  });
}
