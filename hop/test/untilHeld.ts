/**
 * Waits for a state a relay reaches once a pull arrives (a count of held pulls, say). It fails loudly and
 * never goes on as if the pull had arrived: a step that raced past a pull still on its way, on a loaded
 * machine, once made the next pull a held repeat and the test a 30 s hang (CI of stop 62). Bounded in
 * count (1,000 looks); the test's own timeout bounds it in time. `ok` may be asynchronous (a metric read, a
 * request): each look awaits it before the next.
 */
export async function until(ok: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never reached: ${what}`);
}
