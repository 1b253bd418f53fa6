import { type ClockEstimate, endpointText } from '@driftline/protocol';
import { guardClock, type HeldReason } from '../clockGuard.js';
import type { Batch } from './batch.js';
import { openRequests } from './confirmations.js';
import type { Accepted } from './verifyAll.js';

/**
 * Each bundle source's clock minus the hub's, as its path composed it (070-clock-offsets). `unattested`:
 * the batch came from a relay enrolled without a key, so no hop vouches for these (decision 415).
 */
export type PathClocks = ((source: string) => ClockEstimate | null) & { unattested?: boolean };

/** What the contact step reports of one bundle: the offset its times are read with, and a held estimate. */
export interface Contact {
  offsetMs: number | null;
  /** The bundle was fresh (newer than the newest taken, or bringing changes): contact moved. */
  fresh: boolean;
  held: HeldReason | null;
}

/**
 * Step 7, clock and contact: a stored bundle updates its agent's clock offset estimate (T2), bounded by
 * what no hop can forge (`guardClock`, docs/decisions/230-time-a-hop-cannot-forge.md); a fresh one also
 * moves its last contact and the peer it came through, and its site's. A replay (an old bundle whose id
 * the hub no longer remembers, bringing nothing new) changes nothing visible.
 */
export async function recordContact(
  b: Batch,
  v: Accepted['v'],
  peerName: string,
  clocks: PathClocks | undefined,
  changed = true,
): Promise<Contact> {
  const row = v.agent;
  const site = v.doc.site;
  const verdict = guardClock(
    {
      est: {
        offsetMs: row.clockOffsetMs,
        uncertaintyMs: row.clockOffsetUncertaintyMs ?? null,
        sampledAt: row.offsetSampledAt,
      },
      held: row.clockHeld ?? null,
      lastCreated: row.lastCreated ?? null,
      lastCreatedAt: row.lastCreatedAt ?? null,
    },
    {
      created: v.bundle.header.created,
      receivedAt: b.now,
      estimate: clocks?.(endpointText(v.bundle.header.source)),
      via: peerName,
      changed,
      attested: clocks?.unattested !== true,
      upperMs: await requestBound(b, site, row.agent),
    },
  );
  if (!verdict.fresh) return { offsetMs: row.clockOffsetMs, fresh: false, held: null };
  const { est, held, lastCreated, lastCreatedAt } = verdict.next;
  row.clockOffsetMs = est.offsetMs;
  row.clockOffsetUncertaintyMs = est.uncertaintyMs;
  row.offsetSampledAt = est.sampledAt;
  row.clockHeld = held;
  row.lastCreated = lastCreated;
  row.lastCreatedAt = lastCreatedAt;
  row.lastContactAt = b.now;
  row.upstream = peerName;
  b.sites.set(site, { ...(await b.site(site)), site, lastContactAt: b.now, upstream: peerName });
  return { offsetMs: est.offsetMs, fresh: true, held: verdict.held };
}

/**
 * The least `receivedAt − requestedAt` over the site's open plan requests this batch's document says
 * the agent received (decision 230's `requests`): each arrived after the hub made it, so the agent's
 * offset is at most that, whatever a hop says (decision 415). Null when there is none.
 */
async function requestBound(b: Batch, site: string, agent: string): Promise<number | null> {
  if (b.confirmations.size === 0) return null;
  let bound: number | null = null;
  for (const req of await openRequests(b, site)) {
    const c = b.confirmations.get(req.requestId);
    if (!c || c.agent !== agent || req.agent !== agent) continue;
    const upper = c.receivedAt - req.requestedAt;
    if (bound === null || upper < bound) bound = upper;
  }
  return bound;
}
