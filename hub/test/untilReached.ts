/**
 * Waits for a state a test cannot be told of (a query showing in pg_stat_activity, a health check's answer)
 * and fails loudly, naming it, if it never comes; never goes on as if it had. Bounded in count (`looks` looks,
 * `everyMs` apart; 1,000 of 10 ms by default), not by a deadline: a loaded machine makes the wait longer,
 * never shorter. The test's own timeout bounds it in time. `what` may be a function, read at the failure
 * (to say what was seen last).
 */
export async function untilReached(
  ok: () => boolean | Promise<boolean>,
  what: string | (() => string),
  { looks = 1_000, everyMs = 10 }: { looks?: number; everyMs?: number } = {},
): Promise<void> {
  for (let i = 0; i < looks; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  if (await ok()) return;
  throw new Error(`never reached: ${typeof what === 'string' ? what : what()}`);
}
