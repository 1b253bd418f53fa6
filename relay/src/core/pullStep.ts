import type { DownlinkCustody, IncomingBundle } from '../ports/Custody.js';
import type { Upstream } from '../ports/Upstream.js';
import { describeBundle } from './describeBundle.js';
import { slotState, type UpstreamSlot } from './upstreamSlot.js';

/**
 * Pulls the downlink of each served site from every upstream that is ready (out of backoff, inside a
 * contact window), a bounded number of pages per site and upstream. Bundles and that upstream's cursor
 * are committed together, and the cursor goes back as `after` next time, which releases them upstream:
 * at-least-once. Every ready upstream, not the first only: one that answers with altered copies (or
 * none) must not shadow the genuine downlink another upstream holds. Copies are told apart by
 * (id, sha256): the same bytes twice are dropped, a second copy under a known id is held beside the
 * first and reported to `onConflict` (docs/decisions/220-receipts-for-every-kind.md).
 */
export async function pullStep(
  custody: DownlinkCustody,
  slots: UpstreamSlot[],
  sites: readonly string[],
  now: () => number,
  opts: { pageSize: number; maxPages: number },
  onError: (upstream: string, site: string, reason: string) => void,
  /** Sees each committed page (the publication cache notes `blob` manifests here). */
  onStored?: (site: string, items: readonly IncomingBundle[]) => void,
  /** Sees the ids of copies that differ from a copy already taken under the same id. */
  onConflict?: (upstream: string, site: string, ids: readonly string[]) => void,
): Promise<number> {
  let pulled = 0;
  for (const slot of slots.filter((s) => slotState(s, now()).ready)) {
    pulled += await pullFrom(slot.upstream, custody, sites, now, opts, onError, onStored, onConflict);
  }
  return pulled;
}

async function pullFrom(
  up: Upstream,
  custody: DownlinkCustody,
  sites: readonly string[],
  now: () => number,
  opts: { pageSize: number; maxPages: number },
  onError: (upstream: string, site: string, reason: string) => void,
  onStored?: (site: string, items: readonly IncomingBundle[]) => void,
  onConflict?: (upstream: string, site: string, ids: readonly string[]) => void,
): Promise<number> {
  let pulled = 0;
  for (const site of sites) {
    for (let page = 0; page < opts.maxPages; page++) {
      const after = custody.upstreamCursor(up.name, site);
      const r = await up.pullDownlink(site, after, opts.pageSize);
      if (!r.ok) {
        onError(up.name, site, r.message);
        // a site the upstream does not let this relay pull (403): the next sites still get theirs
        // (decision 240); any other failure is the link's, so this round ends
        if (r.status === 403) break;
        return pulled;
      }
      const items = [];
      for (const bytes of r.bundles) {
        const d = describeBundle(bytes, undefined, now());
        if (d.ok) items.push(d.value);
        else onError(up.name, site, `skipped an unreadable downlink bundle: ${d.message}`);
      }
      const { conflicts } = custody.storeDownlink(up.name, site, items, r.cursor, now());
      if (conflicts.length > 0) onConflict?.(up.name, site, conflicts);
      onStored?.(site, items);
      pulled += items.length;
      if (r.bundles.length < opts.pageSize) break;
    }
  }
  return pulled;
}
