/**
 * Benchmark (not a test): in headless Debian Chromium, the first render of the fleet overview and of a
 * 50,000-cell matrix, and the time from a hub event (stub commit → SSE) to the updated cell being painted.
 * A 1,000-cell render in the same run is the baseline the big one is compared to. Prints one JSON object.
 * First render: from navigation start to the first frame painted with the view's content (the overview's
 * totals; the matrix's tiles, which come after the fleet summary and the first environment's cells).
 *
 *   npx tsx ui/bench/render.ts            # or: npm run bench -w @driftline/ui
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildUi, CHROMIUM, hasChromium, launchChromium } from '../test/support/browser.js';
import { bigWorld, cell, counts, setFixtureNow } from '../test/support/fixtures.js';
import { MockHub } from '../test/support/mockHub.js';
import { startStubServer } from '../test/support/stubServer.js';

if (!hasChromium) {
  console.error(`bench: ${CHROMIUM} is absent; install it with \`apt-get install -y chromium\``);
  process.exit(2);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
setFixtureNow(Date.now());
const dir = mkdtempSync(join(tmpdir(), 'driftline-ui-bench-'));
await buildUi(dir);
const browser = await launchChromium();

/** The selector whose first paint ends a first render, and the path of each view. */
const VIEWS = {
  matrix: { path: '/?view=matrix', ready: '[role=gridcell] .t-face' },
  overview: { path: '/', ready: '.ov-totals .ov-n' },
} as const;

async function firstRender(
  sites: number,
  envs: number,
  comps: number,
  runs: number,
  view: keyof typeof VIEWS = 'matrix',
) {
  const hub = new MockHub(bigWorld(sites, envs, comps));
  const server = await startStubServer(hub, dir);
  const times: number[] = [];
  const seen: number[] = [];
  let bytes = 0;
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
      const firstBytes: Promise<number>[] = [];
      page.on('response', (r) => {
        if (/\/api\/(matrix|fleet)/.test(r.url()))
          firstBytes.push(
            r.body().then(
              (b) => b.length,
              () => 0,
            ),
          );
      });
      // In the page: the first frame after the content is in the DOM, timed by the page itself (the
      // harness's own polling would add its latency whenever later parts keep the page busy).
      await page.addInitScript((selector: string) => {
        const w = window as unknown as { firstPaintMs?: number };
        const mo = new MutationObserver(() => {
          if (!document.querySelector(selector)) return;
          mo.disconnect();
          requestAnimationFrame(() => setTimeout(() => (w.firstPaintMs = performance.now()), 0));
        });
        mo.observe(document, { subtree: true, childList: true });
      }, VIEWS[view].ready);
      await page.goto(`${server.url}${VIEWS[view].path}`);
      await page.waitForSelector(VIEWS[view].ready, { timeout: 60_000 });
      // ms from navigation start to the first painted frame with the view's content
      times.push(
        await page
          .waitForFunction(() => (window as unknown as { firstPaintMs?: number }).firstPaintMs, null, {
            timeout: 60_000,
          })
          .then((h) => h.jsonValue() as Promise<number>),
      );
      // as the harness sees it (its polling included), for comparison with earlier runs
      seen.push(
        await page.evaluate(
          () => new Promise<number>((res) => requestAnimationFrame(() => res(performance.now()))),
        ),
      );
      // JSON read before the first paint: the fleet summary and, for the matrix, the first environment
      const got = await Promise.all(firstBytes.slice(0, view === 'matrix' ? 2 : 1));
      bytes = got.reduce((a, b) => a + b, 0);
      await page.close();
    }
  } finally {
    await server.close();
  }
  return {
    view,
    cells: sites * envs * comps,
    jsonBytesBeforeFirstPaint: bytes,
    firstRenderMs: Math.round(median(times)),
    samples: times.map(Math.round),
    seenByHarnessMs: Math.round(median(seen)),
  };
}

async function liveLatency(samples: number, world = bigWorld(100, 10, 50)) {
  const hub = new MockHub(world);
  const server = await startStubServer(hub, dir);
  const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
  const out: number[] = [];
  try {
    await page.goto(`${server.url}/?view=matrix`);
    await page.waitForSelector('[role=gridcell] .t-face', { timeout: 60_000 });
    // steady state: every part of the matrix read, as on a wall screen that has been up a while
    await page.waitForFunction(() => !document.querySelector('.matrix-view [aria-busy]'), null, {
      timeout: 120_000,
    });
    for (let deadline = Date.now() + 10_000; hub.openStreams === 0 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    for (let i = 0; i < samples; i++) {
      const marker = `+${100 + i} `;
      const painted = page.evaluate(
        (m) =>
          new Promise<void>((res) => {
            const grid = document.querySelector('[role=grid]')!;
            const obs = new MutationObserver(() => {
              if (grid.textContent?.includes(m)) {
                obs.disconnect();
                requestAnimationFrame(() => requestAnimationFrame(() => res()));
              }
            });
            obs.observe(grid, { subtree: true, childList: true, characterData: true });
          }),
        marker,
      );
      await new Promise((r) => setTimeout(r, 50)); // let the observer attach before the event is sent
      const t0 = performance.now();
      const now = new Date().toISOString();
      hub.emit({
        type: 'cell-updated',
        cell: cell({
          site: 'site-0000',
          environment: 'env-0',
          component: 'component-000',
          status: 'changes',
          counts: counts({ add: 100 + i }),
          plannedAt: now,
          receivedAt: now,
        }),
      });
      await painted;
      out.push(performance.now() - t0);
    }
  } finally {
    await page.close();
    await server.close();
  }
  return { samples: out.map((x) => Math.round(x)), medianMs: Math.round(median(out)) };
}

try {
  const baseline = await firstRender(10, 10, 10, 3);
  const big = await firstRender(100, 10, 50, 3);
  const overviewBaseline = await firstRender(10, 10, 10, 3, 'overview');
  const overview = await firstRender(100, 10, 50, 3, 'overview');
  const liveSmall = await liveLatency(5, bigWorld(10, 10, 10));
  const live = await liveLatency(7);
  console.log(
    JSON.stringify(
      {
        bench: 'ui-render',
        browser: CHROMIUM,
        baseline,
        big,
        ratioBigToBaseline: Number((big.firstRenderMs / baseline.firstRenderMs).toFixed(2)),
        overviewBaseline,
        overview,
        ratioOverviewToBaseline: Number((overview.firstRenderMs / overviewBaseline.firstRenderMs).toFixed(2)),
        eventToPaint: live,
        eventToPaintAt1000Cells: liveSmall,
      },
      null,
      2,
    ),
  );
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
