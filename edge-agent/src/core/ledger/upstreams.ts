import type { AgentWriteSet, UpstreamRow } from '../../ports/AgentStorage.js';

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

/** The counter of downlink answers of `url` cut as stalled (decision 410); the total is {@link STALLS}. */
export const stallsOf = (url: string) => `upstream-stalls ${url}`;
/** When the last downlink answer of `url` was cut as stalled, ms. */
export const lastStallOf = (url: string) => `upstream-stalled-at ${url}`;
/** Every downlink answer cut as stalled: `driftline_agent_upstream_stalls_total`. */
export const STALLS = 'driftline_agent_upstream_stalls_total';
