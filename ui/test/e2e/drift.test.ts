// @vitest-environment node
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DriftEpisode, DriftEpisodeSchema } from '@driftline/protocol';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUi, hasChromium, launchChromium, NO_CHROMIUM_REASON } from '../support/browser.js';
import { setFixtureNow, smallWorld } from '../support/fixtures.js';
import { MockDrift } from '../support/mockDrift.js';
import { MockHub } from '../support/mockHub.js';
import { startStubServer } from '../support/stubServer.js';

/**
 * The Drift view in Chromium (decision 421): the same drift at 600 sites is one grouped row; its
 * episodes open from the row; "Waive…" on the row waives all 600, and the row then counts them waived.
 */
const required = process.env.DRIFTLINE_REQUIRE_BROWSER === '1';
const SHOTS = fileURLToPath(new URL('../../.tmp/', import.meta.url));
const SIG = 'drift aws_security_group module.site[*].aws_security_group.web[*] {ingress}';

function episodes(): DriftEpisode[] {
  const t = new Date(Date.now() - 3 * 3600_000).toISOString();
  const out: DriftEpisode[] = [];
  for (let i = 0; i < 600; i++)
    out.push(
      DriftEpisodeSchema.parse({
        id: `drift|s-${i}|prod|net|a|r${i}`,
        kind: 'drift',
        site: `s-${i}`,
        environment: 'prod',
        component: 'net',
        address: `module.site["s-${i}"].aws_security_group.web[0]`,
        type: 'aws_security_group',
        attributes: ['ingress'],
        signature: SIG,
        state: 'open',
        firstSeen: t,
        lastSeen: t,
        resolvedAt: null,
        durationS: 10_800,
        firstRunId: `r${i}`,
        lastRunId: `r${i}`,
        acknowledgedBy: null,
        acknowledgedAt: null,
        waiver: null,
      }),
    );
  return out;
}

describe.runIf(hasChromium || required)('the Drift view in Chromium', { timeout: 30_000 }, () => {
  let dir = '';
  let browser: Browser;
  let page: Page;
  let server: { url: string; close: () => Promise<void> };
  setFixtureNow(Date.now());
  const hub = new MockHub(smallWorld());
  const drift = new MockDrift(episodes());
  hub.extra = (m, u, b) => drift.handle(m, u, b);

  beforeAll(async () => {
    if (!hasChromium) throw new Error(NO_CHROMIUM_REASON);
    dir = mkdtempSync(join(tmpdir(), 'driftline-ui-drift-'));
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

  it('shows the drift at 600 sites as one grouped row, and its episodes', async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Drift', exact: true }).click({ timeout: 30_000 });
    const groups = page.getByRole('table', { name: /grouped by signature/ });
    await groups.waitFor({ timeout: 30_000 });
    expect(await groups.locator('tbody tr').count()).toBe(1);
    const row = groups.locator('tbody tr').first();
    expect(await row.locator('td').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining(SIG), '600', '600', '600', '0']),
    );
    await row.getByRole('link', { name: SIG }).click();
    const eps = page.getByRole('table', { name: /Episodes of this signature/ });
    await eps.waitFor({ timeout: 30_000 });
    expect(await eps.locator('tbody tr').count()).toBe(100);
    expect(await eps.textContent()).toContain('module.site["s-0"].aws_security_group.web[0]');
    expect(new URL(page.url()).searchParams.get('view')).toBe('drift');
  });

  it('waives all 600 from the row: counted waived, the waiver listed', async () => {
    const groups = page.getByRole('table', { name: /grouped by signature/ });
    await groups.getByRole('button', { name: 'Waive…' }).click();
    const form = page.getByRole('form', { name: `Waive ${SIG}` });
    await form.getByLabel('Reason').fill('provider upgrade noise');
    await form.getByLabel('Expires').fill('7d');
    await form.getByRole('button', { name: 'Waive 600 episodes' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Waived' }).textContent(), { timeout: 30_000 })
      .toContain('Waived 600 episodes until');
    const row = page
      .getByRole('table', { name: /grouped by signature/ })
      .locator('tbody tr')
      .first();
    await expect.poll(() => row.locator('td').nth(4).textContent(), { timeout: 30_000 }).toBe('600');
    expect(await row.locator('td').nth(3).textContent()).toBe('0');
    expect(await page.getByRole('table', { name: 'Waivers' }).textContent()).toContain(
      'provider upgrade noise',
    );
    const posted = hub.requests.find((r) => r.path === 'POST /api/waivers');
    expect(posted).toMatchObject({ body: { pattern: SIG, expires: '7d', reason: 'provider upgrade noise' } });
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'e2e-drift.png'), fullPage: true });
  });
});

if (!hasChromium && !required) {
  describe('the Drift view in Chromium', () => {
    it.skip(NO_CHROMIUM_REASON, () => {});
  });
}
