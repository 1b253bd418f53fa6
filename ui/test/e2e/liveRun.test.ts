// @vitest-environment node
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ApprovalJourney, asRunId, encodeUlid, type RunDetail } from '@driftline/protocol';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUi, hasChromium, launchChromium, NO_CHROMIUM_REASON } from '../support/browser.js';
import {
  HOUR,
  iso,
  MIN,
  planRequest,
  runDetail,
  runItem,
  setFixtureNow,
  smallWorld,
} from '../support/fixtures.js';
import { MockHub } from '../support/mockHub.js';
import { startStubServer } from '../support/stubServer.js';

/**
 * Issue 44, "pages that update themselves", in Debian's Chromium against the schema-validated stub hub:
 * the run view follows an approval's journey and the cell's next plan over the live stream, without a
 * reload (the journey reads as a list, one step a line; "Approve…" goes once the run is applied and
 * superseded); "Plan now" shows its own request's state and times, never an older run as the answer.
 */
const required = process.env.DRIFTLINE_REQUIRE_BROWSER === '1';
const SHOTS = fileURLToPath(new URL('../../.tmp/', import.meta.url));
const COMMIT = 'c'.repeat(40);

describe.runIf(hasChromium || required)(
  'pages that update themselves, in Chromium',
  { timeout: 60_000 },
  () => {
    let dir = '';
    let browser: Browser;
    let page: Page;
    let server: { url: string; close: () => Promise<void> };
    setFixtureNow(Date.now());
    const hub = new MockHub(smallWorld());
    const key = { site: 'ship-7', environment: 'prod', component: 'compute' };
    const kept = runItem({ n: 2, ...key, status: 'changes', ref: 'main', commit: COMMIT });
    const detail: RunDetail = {
      ...runDetail(kept),
      summary: {
        ...runDetail(kept).summary,
        planFileSha256: 'e'.repeat(64) as never,
        git: { commit: COMMIT },
      },
    };
    hub.addRuns([kept], [detail]);
    const journey: ApprovalJourney = {
      approvalId: '01JZ0000000000000000000001',
      site: 'ship-7' as never,
      environment: 'prod',
      component: 'compute',
      ref: 'main',
      commit: COMMIT,
      runId: kept.runId,
      approver: `ed25519:${'A'.repeat(43)}`,
      approverName: 'Ada Lovelace',
      approvedAt: iso(2 * MIN),
      expiresAt: iso(-HOUR),
      submittedAt: iso(2 * MIN - 1000),
      deliveredAt: null,
      receivedAt: null,
      startedAt: null,
      finishedAt: null,
      state: 'submitted',
      reason: null,
      nextRunId: null,
    };
    hub.approvals = [journey];
    hub.session = null;

    beforeAll(async () => {
      if (!hasChromium) throw new Error(NO_CHROMIUM_REASON);
      dir = mkdtempSync(join(tmpdir(), 'driftline-ui-live-'));
      await buildUi(dir);
      server = await startStubServer(hub, dir);
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      await page.goto(`${server.url}/`);
      await page.getByLabel(/token/i).first().fill('admin-token');
      await page.keyboard.press('Enter');
      await page.getByText('Signed in as ada (admin)').waitFor({ timeout: 120_000 });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('follows an approval to applied, and the next plan, without a reload', async () => {
      await page.goto(`${server.url}/?view=run&run=${kept.runId}`);
      const approvals = page.getByRole('region', { name: 'Approvals' });
      await expect
        .poll(() => approvals.textContent(), { timeout: 60_000 })
        .toContain('waiting at the hub for the site to pull it');
      await page
        .getByRole('button', { name: /Approve/ })
        .first()
        .waitFor({ timeout: 60_000 });
      await expect.poll(() => hub.openStreams, { timeout: 60_000 }).toBeGreaterThan(0);
      const loadsBefore = hub.requests.filter((r) => r.path.startsWith('GET /api/runs/')).length;

      // The agent applies it 2 s later and plans again: the hub's state moves, and it says so live.
      const next = runItem({ n: 1, ...key, status: 'clean', ref: 'main', commit: COMMIT });
      const nextId = asRunId(encodeUlid(Date.now(), new Uint8Array(10)));
      const newer = { ...next, runId: nextId, plannedAt: new Date().toISOString() };
      hub.addRuns([newer], [runDetail(newer)]);
      hub.approvals = [
        {
          ...journey,
          state: 'applied',
          deliveredAt: iso(90_000),
          receivedAt: iso(80_000),
          startedAt: iso(70_000),
          finishedAt: iso(60_000),
          nextRunId: nextId,
        },
      ];
      hub.emit({ type: 'run-added', run: newer });

      await expect.poll(() => approvals.textContent(), { timeout: 60_000 }).toContain('applied');
      const text = (await approvals.textContent()) ?? '';
      expect(text).not.toContain('waiting at the hub');
      expect(text).toContain(`next plan ${nextId}`);
      // Not a page reload: the run itself was not read again, only its approvals and the cell's runs.
      expect(hub.requests.filter((r) => r.path.startsWith('GET /api/runs/')).length).toBe(loadsBefore);
      // Approve… is gone (applied, and a newer plan took the run's place), and that is said.
      await expect
        .poll(() => page.getByRole('button', { name: /Approve/ }).count(), { timeout: 60_000 })
        .toBe(0);
      expect(await page.locator('main').textContent()).toContain(
        "A newer plan of this cell took this run's place",
      );
      // The journey is a list: each step on its own line, numbered by the browser.
      const steps = approvals.locator('ol.journey > li');
      expect(await steps.count()).toBeGreaterThanOrEqual(5);
      const tops = await steps.evaluateAll((els) =>
        els.map((e) => Math.round(e.getBoundingClientRect().top)),
      );
      expect(new Set(tops).size).toBe(tops.length);
      expect(await steps.first().evaluate((e) => getComputedStyle(e).display)).toBe('list-item');
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, 'e2e-live-run.png'), fullPage: true });
    });

    it("shows Plan now's own request: asked, delivered, done with the run that answered it", async () => {
      const state = page.locator('.plan-now [role="status"]');
      await page.getByRole('button', { name: 'Plan now' }).click();
      await expect
        .poll(() => state.textContent(), { timeout: 60_000 })
        .toMatch(/^Plan request asked \d\d:\d\d:\d\d, waiting for the site$/);
      const base = { ...key, requestId: 'pr-1' };
      const asked = new Date(Date.now() - 5000).toISOString();
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({
          ...base,
          requestedAt: asked,
          state: 'delivered',
          deliveredAt: new Date().toISOString(),
        }),
      });
      await expect
        .poll(() => state.textContent(), { timeout: 60_000 })
        .toMatch(/^Plan request asked \d\d:\d\d:\d\d, delivered \d\d:\d\d:\d\d, waiting for the run$/);
      // The same plan came out: the hub names the run it confirmed, planned before the click. Not an answer.
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({
          ...base,
          requestedAt: asked,
          state: 'done',
          doneAt: new Date().toISOString(),
          runId: kept.runId,
        }),
      });
      await expect
        .poll(() => state.textContent(), { timeout: 60_000 })
        .toMatch(new RegExp(`done \\d\\d:\\d\\d:\\d\\d: planned again, unchanged since run ${kept.runId}$`));
      const answer = asRunId(encodeUlid(Date.now(), new Uint8Array(10)));
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({
          ...base,
          requestedAt: asked,
          state: 'done',
          doneAt: new Date().toISOString(),
          runId: answer,
        }),
      });
      await expect
        .poll(() => state.textContent(), { timeout: 60_000 })
        .toMatch(new RegExp(`done \\d\\d:\\d\\d:\\d\\d: run ${answer}$`));
      await page.screenshot({ path: join(SHOTS, 'e2e-plan-now.png'), fullPage: true });
    });
  },
);

if (!hasChromium && !required) {
  describe('pages that update themselves, in Chromium', () => {
    it.skip(NO_CHROMIUM_REASON, () => {});
  });
}
