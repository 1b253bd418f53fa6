import type { BundleId, RelayRefusal, SiteId } from '@driftline/protocol';
import type { ForwardEvent } from './Forwarder.js';

/** Ids kept per notice (the newest), as the wire schema allows. */
const MAX_IDS = 20;
/** Notices sent with one downlink page, at most. */
const MAX_PER_PAGE = 16;

/**
 * Bundles the relay's upstream refused for good, kept per (agent, code) so the site's agents learn it
 * with their next downlink page (`REFUSALS_HEADER`): they show it in `status` and send the refused
 * changes again after `sync.rejectedRetryS` instead of `resendAfterS` (decision 240). Kept in memory
 * for `keepMs` after the latest refusal, also once the cause is fixed (the agent still has to send them
 * again); at most `max` notices (the oldest go first). An agent records a notice it has seen once.
 */
export class RefusalNotices {
  private readonly notices = new Map<string, RelayRefusal>();

  constructor(
    private readonly relay: string,
    private readonly keepMs = 24 * 3_600_000,
    private readonly max = 1000,
  ) {}

  /**
   * Records the refusals of a `refused` forwarding event (bundles with a known `site/agent`); answers the
   * sites it recorded one for (whose agents should hear of it now).
   */
  note(e: Extract<ForwardEvent, { type: 'refused' }>, now: number): Set<string> {
    const sites = new Set<string>();
    e.receipts.forEach((r, i) => {
      const [site, agent] = (e.sources[i] ?? '').split('/');
      if (!site || !agent) return;
      sites.add(site);
      const code = r.code ?? 'refused';
      const key = `${site}/${agent}|${code}`;
      const had = this.notices.get(key);
      const id = r.bundleId as BundleId | null;
      const ids = [...(had?.bundleIds ?? []), ...(id ? [id] : [])].slice(-MAX_IDS);
      if (ids.length === 0) return;
      this.notices.delete(key); // re-inserted last: the map's order is least recently refused first
      this.notices.set(key, {
        site: site as SiteId,
        agent: agent as RelayRefusal['agent'],
        code,
        bundleIds: ids,
        count: (had?.count ?? 0) + 1,
        firstAt: had?.firstAt ?? now,
        lastAt: now,
        relay: this.relay,
        by: r.by.slice(0, 128),
        message: (r.message ?? '').slice(0, 300),
      });
      for (const k of this.notices.keys()) {
        if (this.notices.size <= this.max) break;
        this.notices.delete(k);
      }
    });
    return sites;
  }

  /** The notices for `site`'s agents still within `keepMs`, newest first. */
  for(site: string, now: number): RelayRefusal[] {
    const out: RelayRefusal[] = [];
    for (const [k, n] of this.notices) {
      if (now - n.lastAt >= this.keepMs) this.notices.delete(k);
      else if (n.site === site) out.push(n);
    }
    return out.sort((a, b) => b.lastAt - a.lastAt).slice(0, MAX_PER_PAGE);
  }
}
