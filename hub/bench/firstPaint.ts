/**
 * The dashboard's first paint in Chromium against a filled hub (issue 41's goals: overview ≤ 1.5 s, matrix
 * first tiles ≤ 2 s): signs in once with a token, then times fresh navigations until the overview's
 * "Needs attention" section and the matrix's first cell are on screen. Debian's Chromium only
 * (FIELD-NOTES); answers null when it or the built dashboard is absent.
 */
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';

/** Median of `runs` timed navigations per view, in ms; null when there is no browser or no built UI. */
export async function firstPaint(
  baseUrl: string,
  token: string,
  uiDir: string,
  runs = 3,
): Promise<{ overviewMs: number; matrixFirstTileMs: number; runs: number } | null> {
  if (!existsSync(CHROMIUM) || !existsSync(`${uiDir}/index.html`)) return null;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    await page.goto(`${baseUrl}/`);
    await page.getByRole('heading', { name: 'Sign in to Driftline' }).waitFor({ timeout: 30_000 });
    await page.keyboard.type(token);
    await page.keyboard.press('Enter');
    await page.getByText(/Signed in as/).waitFor({ timeout: 30_000 });
    const overview: number[] = [];
    const matrix: number[] = [];
    for (let i = 0; i < runs; i++) {
      let t0 = performance.now();
      await page.goto(`${baseUrl}/`);
      await page.getByRole('heading', { name: /Needs attention/ }).waitFor({ timeout: 60_000 });
      overview.push(performance.now() - t0);
      t0 = performance.now();
      await page.goto(`${baseUrl}/?view=matrix`);
      await page.getByRole('gridcell').first().waitFor({ timeout: 60_000 });
      matrix.push(performance.now() - t0);
    }
    const median = (xs: number[]) =>
      Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0);
    return { overviewMs: median(overview), matrixFirstTileMs: median(matrix), runs };
  } finally {
    await browser.close();
  }
}
