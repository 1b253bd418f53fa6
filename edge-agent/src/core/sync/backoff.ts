/**
 * Exponential backoff with full jitter, capped: attempt 0 waits up to `baseMs`, each failure doubles
 * the ceiling up to `capMs`. `random` is a port (tests pass a fixed one).
 */
export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
