import type { Custody, IncomingBundle } from '../ports/Custody.js';
import type { Upstream } from '../ports/Upstream.js';
import { describeBundle } from './describeBundle.js';
import { firstReady, type UpstreamSlot } from './upstreamSlot.js';

/**
 * Pulls the downlink of each served site from the first reachable upstream, a bounded number of
 * pages per site. Bundles and the new cursor are committed together, and the cursor goes back as
 * `after` next time, which releases them upstream: at-least-once, duplicates ignored by id.
 */
export async function pullStep(
  custody: Custody,
  slots: UpstreamSlot[],
  sites: readonly string[],
  now: () => number,
  opts: { pageSize: number; maxPages: number },
  onError: (upstream: string, site: string, reason: string) => void,
  /** Sees each committed page (the publication cache notes `blob` manifests here). */
  onStored?: (site: string, items: readonly IncomingBundle[]) => void,
): Promise<number> {
  let pulled = 0;
  const slot = firstReady(slots, now());
  if (!slot) return 0;
  const up: Upstream = slot.upstream;
  for (const site of sites) {
    for (let page = 0; page < opts.maxPages; page++) {
      const after = custody.upstreamCursor(up.name, site);
      const r = await up.pullDownlink(site, after, opts.pageSize);
      if (!r.ok) {
        onError(up.name, site, r.message);
        return pulled;
      }
      const items = [];
      for (const bytes of r.bundles) {
        const d = describeBundle(bytes);
        if (d.ok) items.push(d.value);
        else onError(up.name, site, `skipped an unreadable downlink bundle: ${d.message}`);
      }
      custody.storeDownlink(up.name, site, items, r.cursor, now());
      onStored?.(site, items);
      pulled += items.length;
      if (r.bundles.length < opts.pageSize) break;
    }
  }
  return pulled;
}
