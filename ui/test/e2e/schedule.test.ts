// @vitest-environment node
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { SCHEDULE_CASES } from '../../../protocol/test/scheduleCases.js';
import { hasChromium, launchChromium, NO_CHROMIUM_REASON } from '../support/browser.js';

/**
 * The schedule module as the dashboard ships it: bundled by Vite for the browser, run in Debian's Chromium
 * (its own Intl time-zone data), against the same table of awkward expressions Node answers.
 */
const required = process.env.DRIFTLINE_REQUIRE_BROWSER === '1';
if (!hasChromium) console.warn(`\n\n!!! ui schedule ${NO_CHROMIUM_REASON}\n\n`);

describe.runIf(hasChromium || required)('schedules in Chromium', { timeout: 120_000 }, () => {
  let dir = '';
  let browser: Browser | undefined;

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers every expression of the table as Node does', async () => {
    if (!hasChromium) throw new Error(NO_CHROMIUM_REASON);
    dir = mkdtempSync(join(tmpdir(), 'driftline-schedule-'));
    const { build } = await import('vite');
    await build({
      configFile: false,
      logLevel: 'warn',
      build: {
        outDir: dir,
        target: 'es2022',
        minify: false,
        emptyOutDir: true,
        lib: {
          entry: fileURLToPath(new URL('./scheduleEntry.ts', import.meta.url)),
          formats: ['iife'],
          name: 'scheduleCheck',
          fileName: () => 'schedule.js',
        },
      },
    });
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.setContent('<!doctype html><title>schedule</title>');
    await page.addScriptTag({ content: readFileSync(join(dir, 'schedule.js'), 'utf8') });
    const result = await page.evaluate(() => (globalThis as { scheduleResult?: unknown }).scheduleResult);
    const ua = await page.evaluate(() => navigator.userAgent);
    expect(ua).toContain('Chrome');
    expect(result).toEqual({ cases: SCHEDULE_CASES.length, wrong: [] });
  });
});
