import { createInterface } from 'node:readline';
import { chromium, type Locator, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven for a world test (docs/decisions/540-deterministic-world.md), in a process of its
 * own: the test's process runs on the world's virtual clock, and Playwright needs real timers. It reads one
 * command a line on stdin and answers each on stdout, `{ id, ok, value }` or `{ id, ok: false, error }`.
 * Before each look the page's clock is set to the world's instant (`nowMs`), so the ages the dashboard
 * shows are the world's; nothing here waits on the world, only on the page.
 */
export type Target = { role: string; name?: RegExpSource; row?: { role: string; name: RegExpSource } };
export type RegExpSource = { source: string; flags?: string };

export type BrowserCommand =
  | { op: 'open'; url: string; nowMs: number }
  | { op: 'text'; nowMs: number; target: Target; matches: RegExpSource; timeoutMs: number }
  | { op: 'texts'; nowMs: number; target: Target; item: string; equal: RegExpSource[]; timeoutMs: number }
  | { op: 'count'; css: string; hasText: string }
  | { op: 'url' }
  | { op: 'screenshot'; path: string };

const regExp = (r: RegExpSource) => new RegExp(r.source, r.flags);
const describe = (t: Target) =>
  `${t.role}${t.name ? ` ${regExp(t.name)}` : ''}${t.row ? ` › ${t.row.role} ${regExp(t.row.name)}` : ''}`;

function locate(page: Page, t: Target): Locator {
  const l = page.getByRole(t.role as 'list', t.name ? { name: regExp(t.name) } : {});
  return t.row ? l.getByRole(t.row.role as 'row', { name: regExp(t.row.name) }) : l;
}

/** Looks until `ok` holds of what `read` gives, at most `timeoutMs` (the page's own updates), and gives it. */
async function lookUntil<T>(
  page: Page,
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read().catch(() => undefined);
    if (last !== undefined && ok(last)) return last;
    if (Date.now() > end) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const shown =
    (await page
      .locator('main')
      .textContent({ timeout: 5000 })
      .catch(() => null)) ?? '';
  throw new Error(
    `${what}: not within ${timeoutMs} ms; last read ${JSON.stringify(last)}\n--- the page showed ---\n${shown.slice(0, 3000)}`,
  );
}

async function serve(): Promise<void> {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const run = async (c: BrowserCommand): Promise<unknown> => {
    switch (c.op) {
      case 'open':
        await page.clock.setFixedTime(c.nowMs);
        await page.goto(c.url);
        return page.url();
      case 'text': {
        await page.clock.setFixedTime(c.nowMs);
        const l = locate(page, c.target);
        const want = regExp(c.matches);
        return lookUntil(
          page,
          async () => (await l.textContent({ timeout: 1000 })) ?? '',
          (t) => want.test(t),
          c.timeoutMs,
          `${describe(c.target)} to read ${want}`,
        );
      }
      case 'texts': {
        await page.clock.setFixedTime(c.nowMs);
        const l = locate(page, c.target).getByRole(c.item as 'listitem');
        const want = c.equal.map(regExp);
        return lookUntil(
          page,
          () => l.allTextContents(),
          (ts) => ts.length === want.length && ts.every((t, i) => want[i]?.test(t)),
          c.timeoutMs,
          `${describe(c.target)}'s ${c.item}s to be ${want.join(', ')}`,
        );
      }
      case 'count':
        return page.locator(c.css, { hasText: c.hasText }).count();
      case 'url':
        return page.url();
      case 'screenshot':
        await page.screenshot({ path: c.path, fullPage: true });
        return c.path;
    }
  };
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const { id, ...command } = JSON.parse(line) as BrowserCommand & { id: number };
    try {
      const value = await run(command as BrowserCommand);
      process.stdout.write(`${JSON.stringify({ id, ok: true, value })}\n`);
    } catch (e) {
      process.stdout.write(`${JSON.stringify({ id, ok: false, error: (e as Error).message })}\n`);
    }
  }
  await browser.close();
}

if (process.argv[1] === import.meta.filename) {
  serve().then(
    () => process.exit(0),
    (e: Error) => {
      process.stderr.write(`browser side: ${e.stack ?? e.message}\n`);
      process.exit(1);
    },
  );
}
