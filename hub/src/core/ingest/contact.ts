import { type ClockEstimate, endpointText } from '@driftline/protocol';
import { nextOffset } from '../clockOffset.js';
import type { Batch } from './batch.js';
import type { Accepted } from './verifyAll.js';

/** Each bundle source's clock minus the hub's, as its path composed it (070-clock-offsets). */
export type PathClocks = (source: string) => ClockEstimate | null;

/**
 * Step 7, clock and contact: a stored bundle updates its agent's clock offset estimate (T2), its last
 * contact and the peer it came through, and its site's. Returns the agent's offset now (ms), by which
 * the document's agent times are read.
 */
export async function recordContact(
  b: Batch,
  v: Accepted['v'],
  peerName: string,
  clocks: PathClocks | undefined,
): Promise<number | null> {
  const row = v.agent;
  const off = nextOffset(
    {
      offsetMs: row.clockOffsetMs,
      uncertaintyMs: row.clockOffsetUncertaintyMs ?? null,
      sampledAt: row.offsetSampledAt,
    },
    v.bundle.header.created,
    b.now,
    clocks?.(endpointText(v.bundle.header.source)),
  );
  row.clockOffsetMs = off.offsetMs;
  row.clockOffsetUncertaintyMs = off.uncertaintyMs;
  row.offsetSampledAt = off.sampledAt;
  row.lastContactAt = b.now;
  row.upstream = peerName;
  const site = v.doc.site;
  b.sites.set(site, { ...(await b.site(site)), site, lastContactAt: b.now, upstream: peerName });
  return off.offsetMs;
}
