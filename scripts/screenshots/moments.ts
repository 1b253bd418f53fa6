/**
 * The screenshots that wait for a moment of the demo: a stuck lock, a plan request on its way, a silent
 * relay. Each drives the dashboard as a person would and shoots what it shows.
 */
import type { Page } from 'playwright-core';
import { relayPid, say, sleep } from './demo.js';
import { type Cell, cellQuery, type HubApi } from './hubApi.js';

/** Saves the page as `<name>.png` in the output folder. */
export type Shot = (name: string) => Promise<void>;

/** Polls `check` every `everyMs` until it answers a value, or null once `timeoutMs` passed. */
async function until<T>(check: () => Promise<T | null | undefined>, timeoutMs: number, everyMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > deadline) return null;
    await sleep(everyMs);
  }
}

/**
 * `stuck-lock`: the page of the cell whose lock the demo holds (DRIFTLINE_DEMO_HOLD_LOCK), once its
 * latest run is `failed`/`stuck-lock`: Terraform's Lock Info and the `force-unlock` command
 * (docs/decisions/555-stuck-lock-stays-stuck.md).
 */
export async function shootStuckLock(page: Page, api: HubApi, cell: Cell, shot: Shot): Promise<boolean> {
  const stuck = await until(async () => {
    const latest = (await api.runs(cell))[0];
    return latest?.reason === 'stuck-lock' ? latest : null;
  }, 300_000);
  if (!stuck) {
    say(
      `${cell.site}/${cell.environment}/${cell.component} is not stuck-lock after 300 s: no stuck-lock shot`,
    );
    return false;
  }
  await page.goto(`${api.hub}/?${cellQuery(cell)}`);
  await page.getByRole('heading', { name: 'Stuck state lock' }).waitFor({ timeout: 30_000 });
  await shot('stuck-lock');
  return true;
}

/** The file a plan request's journey step is shot as (docs/decisions/560-plan-request-states.md). */
function stepName(label: string): string {
  if (label.startsWith('at ')) return 'at-relay';
  return label.split(' ')[0] ?? label;
}

/**
 * `plan-request`: presses "Plan now" on the cell's page and shoots its journey each time a step is added
 * (`plan-request-<step>.png`, the steps the link lets it catch: a shot the next step overtook while it was
 * taken is dropped), then the whole journey once done (`plan-request.png`). Answers the steps it caught.
 */
export async function shootPlanRequest(
  page: Page,
  api: HubApi,
  cell: Cell,
  shot: Shot,
  save: (name: string, png: Buffer) => void,
): Promise<string[]> {
  await page.goto(`${api.hub}/?${cellQuery(cell)}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
  const button = page.getByRole('button', { name: 'Plan now' });
  await button.waitFor();
  await button.click();
  const steps = page.locator('ol.journey[aria-label="Plan request journey"] > li');
  const status = page.locator('.plan-now [role=status]');
  const caught: string[] = [];
  let seen = 0;
  const deadline = Date.now() + 600_000;
  for (;;) {
    const text = (await status.textContent()) ?? '';
    if (/, done|expired|refused/.test(text)) break;
    const n = await steps.count();
    if (n > seen) {
      const name = stepName(((await steps.nth(n - 1).textContent()) ?? '').trim());
      const png = await page.screenshot();
      // the same steps before and after: the shot shows this one
      if ((await steps.count()) === n) {
        save(`plan-request-${name}`, png);
        caught.push(name);
      }
      seen = n;
    }
    if (Date.now() > deadline) {
      say(`the plan request is not done after 600 s (${text}): no plan-request shot`);
      return caught;
    }
    await sleep(100);
  }
  // the steps' ages settle
  await sleep(1000);
  await shot('plan-request');
  caught.push('done');
  return caught;
}

/**
 * `silent-relay`: suspends the demo's relay (SIGSTOP: its process stays, it sends no status and passes
 * nothing on) until the hub calls it silent (docs/operations.md: no status for five minutes) and the
 * overview's "Needs attention" names it, shoots the overview, then resumes it (SIGCONT).
 */
export async function shootSilentRelay(
  page: Page,
  api: HubApi,
  demoPid: number,
  shot: Shot,
): Promise<boolean> {
  const pid = relayPid(demoPid);
  if (pid === null) {
    say('no relay process under the demo: no silent-relay shot');
    return false;
  }
  say(`suspending the relay (pid ${pid}) until the hub calls it silent (about 5 min)…`);
  process.kill(pid, 'SIGSTOP');
  try {
    const silent = await until(
      async () => (await api.relays()).find((r) => r.problems.some((p) => p.code === 'silent')),
      480_000,
      10_000,
    );
    if (!silent) {
      say('the hub did not call the relay silent within 480 s: no silent-relay shot');
      return false;
    }
    await page.goto(`${api.hub}/`);
    await page.getByRole('heading', { name: /Fleet overview/ }).waitFor({ timeout: 30_000 });
    await page
      .getByText(new RegExp(`${silent.name} silent for`))
      .first()
      .waitFor({ timeout: 60_000 });
    await shot('silent-relay');
    return true;
  } finally {
    process.kill(pid, 'SIGCONT');
    say(`resumed the relay (pid ${pid})`);
  }
}
