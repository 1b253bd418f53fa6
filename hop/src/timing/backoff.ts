/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"):
 * after the n-th failure in a row the ceiling is `min(maxMs, baseMs·2^(n-1))` and the delay is drawn
 * uniformly from [0, ceiling), so many relays and agents coming back after one outage do not retry in
 * lock step. No failure yet: no delay. `random` is a port (tests pass a fixed one).
 */
export function backoffDelay(failures: number, baseMs: number, maxMs: number, random: () => number): number {
  if (failures <= 0) return 0;
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
  return Math.floor(random() * ceiling);
}
