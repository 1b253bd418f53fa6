import type { AgentStorage, AgentWriteSet, UpstreamRow } from '../../ports/AgentStorage.js';

/**
 * Upstream health (what `status` shows and the last-push line reads) and the downlink cursor per
 * upstream, in one row per upstream url.
 */

export const newUpstream = (url: string): UpstreamRow => ({
  url,
  cursor: null,
  lastOkAt: null,
  lastErrorAt: null,
  lastError: null,
  consecutiveFailures: 0,
});

/** Adds to `w` the outcome of talking to `url`: ok (`error` null) or the error, kept to 500 characters. */
export function upstreamResult(
  w: AgentWriteSet,
  current: UpstreamRow | undefined,
  url: string,
  error: string | null,
  now: number,
): void {
  const row = current ?? newUpstream(url);
  const next: UpstreamRow =
    error === null
      ? { ...row, lastOkAt: now, consecutiveFailures: 0 }
      : {
          ...row,
          lastErrorAt: now,
          lastError: error.slice(0, 500),
          consecutiveFailures: row.consecutiveFailures + 1,
        };
  w.upstreams = [...(w.upstreams ?? []).filter((u) => u.url !== url), next];
}

/** The counter of answers of `url` cut as stalled (decisions 410, 515); the total is {@link STALLS}. */
export const stallsOf = (url: string) => `upstream-stalls ${url}`;
/** When the last answer of `url` was cut as stalled, ms. */
export const lastStallOf = (url: string) => `upstream-stalled-at ${url}`;
/** Every answer cut as stalled, a downlink's or a push's: `driftline_agent_upstream_stalls_total`. */
export const STALLS = 'driftline_agent_upstream_stalls_total';

/** The writes of one exchange with `upstream`: ok (`error` null) or failed. */
export function upstreamWrites(
  storage: AgentStorage,
  upstream: string,
  error: string | null,
  now: number,
): AgentWriteSet {
  const w: AgentWriteSet = {};
  upstreamResult(w, storage.upstream(upstream), upstream, error, now);
  return w;
}

/**
 * What a downlink pull learnt of `upstream`, or null when it changes nothing `status` shows (an answer
 * within a minute of the last ok, with no failure since): not a write per held pull.
 */
export function pullResultWrites(
  storage: AgentStorage,
  upstream: string,
  error: string | null,
  now: number,
): AgentWriteSet | null {
  const row = storage.upstream(upstream);
  const fresh = row && row.consecutiveFailures === 0 && row.lastOkAt !== null && now - row.lastOkAt < 60_000;
  return error === null && fresh ? null : upstreamWrites(storage, upstream, error, now);
}

/** A downlink answer of `upstream` cut as stalled: its failure, counted, and when (decision 410). */
export function stallWrites(
  storage: AgentStorage,
  upstream: string,
  error: string,
  now: number,
): AgentWriteSet {
  const w = upstreamWrites(storage, upstream, error, now);
  const c = (name: string) => storage.counter(name);
  w.counters = {
    ...w.counters,
    [STALLS]: c(STALLS) + 1,
    [stallsOf(upstream)]: c(stallsOf(upstream)) + 1,
    [lastStallOf(upstream)]: now,
  };
  return w;
}
