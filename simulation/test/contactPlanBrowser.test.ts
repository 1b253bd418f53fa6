import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  type FleetResponse,
  type FleetSite,
  type MatrixCell,
  nextWindowOf,
  parseWindows,
} from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../src/topology/programs.js';
import { type HubOnSocket, World } from '../src/world/World.js';
import { WorldBrowser } from './worldBrowser.js';

/**
 * Contact plans as an operator at headquarters sees them, in Debian's Chromium, over a world
 * (docs/decisions/540-deterministic-world.md; it replaces the demo's `contactPlan.e2e`, which waited on
 * compressed link time). A polar site declares its passes, 40 s of every 4 minutes: between passes its
 * cells read "waiting for window" with the next window's time and the overview gives the site one row;
 * once its link is cut, the first pass that goes by without contact turns it `overdue`, not before that
 * pass and its grace have ended and within one look after. The world stands still while the browser
 * looks; the page's clock is the world's.
 */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.DRIFTLINE_REQUIRE_BROWSER === '1';
const REASON = `SKIPPED: ${CHROMIUM} is not installed (apt-get install chromium); set DRIFTLINE_REQUIRE_BROWSER=1 to make this a failure`;
if (!hasChromium) console.warn(`\n\n!!! contact plan world ${REASON}\n\n`);
const SHOTS = join(ROOT, '.driftline', 'e2e');
const PERIOD_MS = 240_000;
const WINDOW_MS = 40_000;
const GRACE_S = 30;
/** How often the operator looks, in world time: the figures below are exact to this. */
const LOOK_MS = 1000;
const SITE = 'site-001';

// hours of world time in seconds: the bound is for a hung world or browser, not a timing
describe.runIf(hasChromium || required)(
  'contact plans in a browser, over the world',
  { timeout: 300_000 },
  () => {
    let world: World;
    let hub: HubOnSocket;
    let browser: WorldBrowser;
    const site = async (): Promise<FleetSite | undefined> =>
      (await world.hubApi<FleetResponse>('/api/fleet')).sites.find((s) => s.site === SITE);

    const lookUntil = <T>(what: string, f: () => Promise<T | false | undefined>, withinMs: number) =>
      world.lookUntil(what, f, withinMs, LOOK_MS);

    beforeAll(async () => {
      if (!hasChromium) throw new Error(REASON);
      const build = spawnSync('npm', ['run', 'build', '-w', '@driftline/ui'], { cwd: ROOT, stdio: 'ignore' });
      if (build.status !== 0) throw new Error('the dashboard did not build (npm run build -w @driftline/ui)');
      mkdirSync(SHOTS, { recursive: true });
      world = new World({
        seed: 32,
        sites: 1,
        components: 2,
        oneWayMs: 1500,
        contact: { periodMs: PERIOD_MS, upMs: WINDOW_MS },
        // a dead radio refuses while down; the cut below hangs, as a link that just went silent does
        siteLink: { whenDown: 'refuse' },
        schedule: '*/2 * * * *',
        hub: { contactPlans: { graceS: GRACE_S, learnSilenceS: 20 } },
        uiDir: join(ROOT, 'ui', 'dist'),
      });
      await world.start();
      hub = await world.listen();
      browser = WorldBrowser.start();
      await browser.open(hub.signInUrl);
      expect(await browser.url()).toBe(`${hub.url}/`);
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      await hub?.close();
      await world?.close();
    }, 120_000);

    it('reads the site as waiting for its window between passes, with one overview row for it', async () => {
      const plan = await lookUntil(
        `${SITE} to declare its passes, deliver results and wait for its next window`,
        async () => {
          const s = await site();
          const cells = (await world.hubApi<{ cells: MatrixCell[] }>(`/api/matrix?site=${SITE}`)).cells;
          return (
            s?.contact?.source === 'declared' &&
            cells.some((c) => c.runId) &&
            s.contact.state === 'waiting' &&
            s.link === 'waiting' &&
            s.contact
          );
        },
        3 * PERIOD_MS,
      );
      expect(plan).toMatchObject({ source: 'declared', judged: true });
      expect(plan.windows[0]).toMatch(/^every 4m for 40s from /);

      await browser.open(`${hub.url}/`);
      await browser.texts({ role: 'list', name: /^Silent sites$/ }, 'listitem', [
        new RegExp(`^◌ silent ${SITE}: \\d+ cells, waiting for window in \\d+ (s|min)$`),
      ]);
      // Its silence is that one row: no stale row per cell (its failures and drift stay listed, as facts).
      expect(await browser.count('li.att-stale', SITE)).toBe(0);
      expect(await browser.count('li.att-silent', SITE)).toBe(1);
      await browser.screenshot(join(SHOTS, 'contact-waiting-overview.png'));

      await browser.open(`${hub.url}/?view=matrix&site=${SITE}`);
      const grid = await browser.text(
        { role: 'grid' },
        /waiting for window · (next in \d+ (s|min)|opens now)/,
      );
      expect(grid).not.toContain('site unreachable');
      await browser.screenshot(join(SHOTS, 'contact-waiting-matrix.png'));
    });

    it('turns the site overdue at the first pass that goes by after its link is cut, to the look', async () => {
      const s = world.sites[0];
      if (!s) throw new Error('no site');
      const specs = parseWindows((await site())?.contact?.windows ?? []);
      // cut between passes, as a radio that fails does: from now on no pass brings contact
      s.link.cut();
      const missed = nextWindowOf(specs, Date.now());
      if (!missed) throw new Error('no next window');
      const overdue = await lookUntil(
        `${SITE} to read overdue`,
        async () => {
          const now = await site();
          return now?.contact?.state === 'overdue' && { at: Date.now(), s: now };
        },
        2 * PERIOD_MS,
      );
      expect(overdue.at).toBeGreaterThanOrEqual(missed.end + GRACE_S * 1000);
      expect(overdue.at).toBeLessThanOrEqual(missed.end + GRACE_S * 1000 + LOOK_MS);
      expect(overdue.s.contact?.missedWindows).toBe(1);

      await browser.open(`${hub.url}/?view=matrix&site=${SITE}`);
      await browser.text({ role: 'grid' }, /overdue · /);
      await browser.open(`${hub.url}/?view=links`);
      // The links table's own row: the relays table below names the site among relay-1's sites too.
      await browser.text(
        { role: 'table', name: /Each site's link/, row: { role: 'row', name: new RegExp(`^${SITE}`) } },
        /overdue: 1 window passed without contact/,
      );
      await browser.screenshot(join(SHOTS, 'contact-overdue-links.png'));
    });
  },
);

if (!hasChromium && !required) {
  describe('contact plans in a browser, over the world', () => {
    it.skip(REASON, () => {});
  });
}
