/**
 * Waits for a state (a stream open, an event delivered) and fails loudly naming it if it never comes. Bounded in
 * count, not by a deadline: `looks` looks 10 ms apart, so a loaded machine takes longer but never cuts the wait
 * short; the test's own timeout bounds it in time.
 */
export async function until(ok: () => boolean, what: string, looks = 1_000): Promise<void> {
  for (let i = 0; i < looks; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  if (ok()) return;
  throw new Error(`never reached: ${what}`);
}
