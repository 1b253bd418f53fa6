/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And Jitter"):
 * the delay after the n-th consecutive failure is uniform in [0, min(max, base·2^(n-1))], so many
 * relays coming back after an outage do not retry in lock step.
 */
export function backoffDelay(failures: number, baseMs: number, maxMs: number, random: () => number): number {
  if (failures <= 0) return 0;
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
  return Math.floor(random() * cap);
}
