import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const NO_CHROMIUM_REASON = `SKIPPED: ${CHROMIUM} is absent, so the browser end-to-end test did NOT run. Install it with \`apt-get install -y chromium\` (Debian); set DRIFTLINE_REQUIRE_BROWSER=1 to make its absence a failure.`;

/** Debian's Chromium, headless, with the flags this machine needs (FIELD-NOTES). Never downloads a browser. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}

/** Builds the dashboard with the project's Vite config into `outDir`. */
export async function buildUi(outDir: string): Promise<void> {
  const { build } = await import('vite');
  await build({
    configFile: fileURLToPath(new URL('../../vite.config.ts', import.meta.url)),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
}
