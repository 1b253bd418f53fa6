/** How long one offset estimate stands before a fresh sample may replace it downward. */
export const OFFSET_WINDOW_MS = 6 * 3_600_000;

/**
 * Agent clock minus hub clock (T2). A bundle made at agent time `created` arrives at hub time
 * `receivedAt` after a transit ≥ 0, so `created - receivedAt` = offset − transit ≤ offset: the
 * largest sample in a window is the best estimate (the one with least transit, as in NTP's filter).
 * Over a store-and-forward link it overestimates ages by the shortest transit seen, never underestimates.
 */
export function nextOffset(
  prev: { offsetMs: number | null; sampledAt: number | null },
  created: number,
  receivedAt: number,
): { offsetMs: number; sampledAt: number } {
  const sample = created - receivedAt;
  if (
    prev.offsetMs === null ||
    prev.sampledAt === null ||
    sample >= prev.offsetMs ||
    receivedAt - prev.sampledAt > OFFSET_WINDOW_MS
  ) {
    return { offsetMs: sample, sampledAt: receivedAt };
  }
  return { offsetMs: prev.offsetMs, sampledAt: prev.sampledAt };
}
