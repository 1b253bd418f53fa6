/**
 * Waits for a state a test's mocks or programs reach (pulls held open, a count of pushes) and fails loudly,
 * naming it, if it never comes; never goes on as if it had. Bounded in count (`looks` looks 10 ms apart, 1,000
 * by default), not by a deadline: a loaded machine makes it slower, never short; the test's own timeout bounds
 * it in time.
 */
export async function untilReached(ok: () => boolean, what: string, looks = 1_000): Promise<void> {
  for (let i = 0; i < looks; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  if (ok()) return;
  throw new Error(`never reached: ${what}`);
}
