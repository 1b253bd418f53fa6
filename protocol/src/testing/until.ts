/**
 * Waits for a state a test cannot be told of (a pull held at a relay, a query in pg_stat_activity, a stream
 * open) and fails loudly, naming it, if it never comes: it never goes on as if it had (a silent give-up
 * once made a held-pull test hang 30 s on CI). Bounded in count (`looks` looks `everyMs` apart; 1,000 of
 * 10 ms by default), not by a deadline: a loaded machine makes the wait longer, never shorter, and the
 * test's own timeout bounds it in time. `ok` may be asynchronous (each look awaits it); `what` may be a
 * function, read at the failure to say what was seen last. For tests only (`@driftline/protocol/testing`).
 */
export async function until(
  ok: () => boolean | Promise<boolean>,
  what: string | (() => string),
  { looks = 1_000, everyMs = 10 }: { looks?: number; everyMs?: number } = {},
): Promise<void> {
  for (let i = 0; i < looks; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  if (await ok()) return;
  throw new Error(
    `never reached: ${typeof what === 'string' ? what : what()} (${looks} looks ${everyMs} ms apart)`,
  );
}
