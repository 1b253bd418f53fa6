// @vitest-environment node
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUi, hasChromium, launchChromium, NO_CHROMIUM_REASON } from '../support/browser.js';
import { cell, setFixtureNow, smallWorld } from '../support/fixtures.js';
import { MockHub } from '../support/mockHub.js';
import { startStubServer } from '../support/stubServer.js';

/**
 * The overview's Sites table in Chromium at 1,000 sites more than the small world (issue 41): the hub
 * pages it (50 a page, `cursor`), sorts it (`sort`, from the column headers) and filters it
 * (`contains`); the browser renders the page it was sent and asks for the next one.
 */
const required = process.env.DRIFTLINE_REQUIRE_BROWSER === '1';
const site = (i: number) => `s-${String(i).padStart(4, '0')}`;

describe.runIf(hasChromium || required)('the paged Sites table in Chromium', { timeout: 30_000 }, () => {
  let dir = '';
  let browser: Browser;
  let page: Page;
  let server: { url: string; close: () => Promise<void> };
  setFixtureNow(Date.now());
  const hub = new MockHub(smallWorld());
  const model = hub.sites[0]!;
  for (let i = 0; i < 1000; i++) hub.sites.push({ ...model, site: site(i) as never, cells: 1 });
  // s-0999 has the most failed cells: first when sorted by problems.
  for (const component of ['a', 'b', 'c', 'd', 'e'])
    hub.cells.push(cell({ site: site(999), environment: 'prod', component, status: 'failed', counts: null }));
  const total = hub.sites.length;
  const sitesAsked = () =>
    hub.requests.filter((r) => r.path.startsWith('GET /api/sites?')).map((r) => r.path.slice(15));

  beforeAll(async () => {
    if (!hasChromium) throw new Error(NO_CHROMIUM_REASON);
    dir = mkdtempSync(join(tmpdir(), 'driftline-ui-sites-'));
    await buildUi(dir);
    server = await startStubServer(hub, dir);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const table = () => page.getByRole('table', { name: /^Sites, / });
  const rows = () => table().locator('tbody tr');
  const firstSite = () => rows().first().locator('th a').first().textContent();
  const pager = () => page.getByRole('navigation', { name: 'Sites pages' });

  it('shows the first 50 sites, worst first, of the total the hub counted', async () => {
    await page.goto(`${server.url}/`);
    await table().waitFor({ timeout: 30_000 });
    expect(await rows().count()).toBe(50);
    expect(await firstSite()).toBe('s-0999');
    expect(await pager().getByRole('status').textContent()).toBe(
      `1–50 of ${total.toLocaleString('en')} sites`,
    );
    expect(await pager().getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
    expect(sitesAsked()).toContain('sort=problems&limit=50');
  });

  it('asks the hub for the next page, and back', async () => {
    await pager().getByRole('button', { name: 'Next' }).click();
    await expect
      .poll(() => pager().getByRole('status').textContent(), { timeout: 30_000 })
      .toMatch(/^51–100 of/);
    expect(await rows().count()).toBe(50);
    expect(sitesAsked()).toContain('sort=problems&limit=50&cursor=o50');
    await pager().getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => firstSite(), { timeout: 30_000 }).toBe('s-0999');
  });

  it('sorts by the site header on the hub, and the reverse on a second click', async () => {
    await table().getByRole('button', { name: /^site/ }).click();
    await expect.poll(() => firstSite(), { timeout: 30_000 }).toBe('lab');
    expect(sitesAsked()).toContain('sort=site&limit=50');
    await table().getByRole('button', { name: /^site/ }).click();
    await expect.poll(() => firstSite(), { timeout: 30_000 }).toBe('ship-7');
    expect(await table().locator('th[aria-sort="descending"]').count()).toBe(1);
  });

  it('filters by name on the hub', async () => {
    await page.getByRole('searchbox', { name: /Filter sites/ }).fill('s-100');
    await expect.poll(() => rows().count(), { timeout: 30_000 }).toBe(0);
    await page.getByRole('searchbox', { name: /Filter sites/ }).fill('s-09');
    await expect
      .poll(() => pager().getByRole('status').textContent(), { timeout: 30_000 })
      .toBe('1–50 of 100 sites');
    expect(sitesAsked()).toContain('sort=-site&limit=50&contains=s-09');
    expect(await pager().getByRole('button', { name: 'Next' }).isDisabled()).toBe(false);
  });
});

if (!hasChromium && !required) {
  describe('the paged Sites table in Chromium', () => {
    it.skip(NO_CHROMIUM_REASON, () => {});
  });
}
