import { type ClockEstimate, DRIFT_PER_MS } from '@driftline/protocol';

/** How long one offset estimate stands before a fresh sample may replace it whatever its quality. */
export const OFFSET_WINDOW_MS = 6 * 3_600_000;

/** The hub's estimate of one agent's clock minus its own (T2); `uncertaintyMs` null: a one-way bound only. */
export interface OffsetEstimate {
  offsetMs: number | null;
  uncertaintyMs: number | null;
  /** Hub time of the bundle the estimate was last taken from. */
  sampledAt: number | null;
}

/**
 * The next offset estimate of an agent, after one of its bundles (made at agent time `created`) arrived at
 * hub time `receivedAt`, optionally with the estimate its path composed from round trips per hop
 * (docs/decisions/070-clock-offsets.md).
 *
 * - A round-trip estimate is first cut by what one-way transit proves: transit ≥ 0, so the offset is at
 *   least `created − receivedAt`. It replaces the current one when it is at least as certain (the current
 *   one's uncertainty grown with its age), when the two cannot both be right (the clock was stepped), or
 *   when the current one is older than {@link OFFSET_WINDOW_MS}. A trusted clock is not corrected: 0 ± 0.
 * - Without one (an older agent or relay on the path) a round-trip estimate still in its window stands;
 *   else the hub falls back to `created − receivedAt` = offset − transit, the largest in a window (the
 *   least transit, as in NTP's filter), which mistakes link delay for clock error: its uncertainty is unknown.
 */
export function nextOffset(
  prev: OffsetEstimate,
  created: number,
  receivedAt: number,
  estimate?: ClockEstimate | null,
): OffsetEstimate {
  const bound = created - receivedAt;
  const stale = prev.sampledAt === null || receivedAt - prev.sampledAt > OFFSET_WINDOW_MS;
  if (estimate?.trusted) return { offsetMs: 0, uncertaintyMs: 0, sampledAt: receivedAt };
  if (estimate) {
    const lo = Math.max(estimate.offsetMs - estimate.uncertaintyMs, bound);
    const hi = estimate.offsetMs + estimate.uncertaintyMs;
    // lo > hi: the path's estimate says the bundle arrived before it was made; it is not used.
    if (lo <= hi) {
      const next = {
        offsetMs: Math.round((lo + hi) / 2),
        uncertaintyMs: Math.ceil((hi - lo) / 2),
        sampledAt: receivedAt,
      };
      if (prev.offsetMs === null || prev.uncertaintyMs == null || stale) return next;
      const aged = prev.uncertaintyMs + (receivedAt - (prev.sampledAt ?? receivedAt)) * DRIFT_PER_MS;
      const disjoint = Math.abs(next.offsetMs - prev.offsetMs) > next.uncertaintyMs + aged;
      return next.uncertaintyMs <= aged || disjoint ? next : prev;
    }
  }
  if (prev.uncertaintyMs != null && !stale) return prev;
  if (prev.offsetMs === null || stale || bound >= prev.offsetMs)
    return { offsetMs: bound, uncertaintyMs: null, sampledAt: receivedAt };
  return { offsetMs: prev.offsetMs, uncertaintyMs: null, sampledAt: prev.sampledAt };
}

/**
 * The uncertainty of a site's offset (the mean of its agents'): wide enough that the interval covers every
 * agent's own. Null when an agent's offset is only a one-way bound.
 */
export function siteOffsetUncertainty(
  agents: readonly { clockOffsetMs: number | null; clockOffsetUncertaintyMs?: number | null }[],
  meanMs: number | null,
): number | null {
  if (meanMs === null) return null;
  let widest = 0;
  for (const a of agents) {
    if (a.clockOffsetMs === null) continue;
    if (a.clockOffsetUncertaintyMs == null) return null;
    widest = Math.max(widest, Math.abs(a.clockOffsetMs - meanMs) + a.clockOffsetUncertaintyMs);
  }
  return widest;
}
