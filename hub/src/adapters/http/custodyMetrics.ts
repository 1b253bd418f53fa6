import { Gauge, type Registry } from 'prom-client';
import { custodyHeld } from '../../core/fleet/custodyHeld.js';
import type { HubStore } from '../../ports/HubStore.js';

/** Upstreams named by a label of `hub_custody_overdue_results`; the rest are summed as `other`. */
export const CUSTODY_UPSTREAM_LABELS = 50;

type CustodyStore = Pick<HubStore, 'listAgentBriefs' | 'listPeers'>;

/** Results held past their deadline per upstream (relay name or URL), and the sites whose results are held. */
async function custodyNow(store: CustodyStore): Promise<{ byUpstream: Map<string, number>; sites: number }> {
  const [briefs, peers] = await Promise.all([store.listAgentBriefs(), store.listPeers()]);
  const held = custodyHeld(
    briefs,
    peers.map((p) => p.name),
  );
  const byUpstream = new Map<string, number>();
  for (const h of held) byUpstream.set(h.upstream, (byUpstream.get(h.upstream) ?? 0) + h.results);
  return { byUpstream, sites: new Set(held.map((h) => h.site)).size };
}

/**
 * The custody gauges of `/metrics` (issue 59, docs/decisions/575-custody-deadline-per-path.md), read
 * from the agent briefs at each scrape (one read for both gauges): results agents report an upstream
 * holds past its deadline, by upstream (the largest {@link CUSTODY_UPSTREAM_LABELS} named, the rest
 * `upstream="other"`), and the sites with such an upstream.
 */
export function registerCustodyGauges(registry: Registry, store: CustodyStore): void {
  let pending: ReturnType<typeof custodyNow> | null = null;
  // both gauges collect in the same scrape: the first starts the read, the second shares it
  const read = () => {
    pending ??= custodyNow(store).finally(() => {
      pending = null;
    });
    return pending;
  };
  new Gauge({
    name: 'hub_custody_overdue_results',
    help: 'Results agents report an upstream holds past its custody deadline without the hub ack, by upstream (a relay name or the URL as the agent names it; beyond 50 upstreams, summed as other): docs/decisions/575',
    labelNames: ['upstream'],
    registers: [registry],
    async collect() {
      this.reset();
      const { byUpstream } = await read();
      const ranked = [...byUpstream].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      let other = 0;
      for (const [i, [upstream, n]] of ranked.entries())
        if (i < CUSTODY_UPSTREAM_LABELS) this.set({ upstream }, n);
        else other += n;
      if (ranked.length > CUSTODY_UPSTREAM_LABELS) this.set({ upstream: 'other' }, other);
    },
  });
  new Gauge({
    name: 'hub_custody_overdue_sites',
    help: 'Sites with an agent that reports an upstream sitting on its results past the custody deadline: docs/decisions/575',
    registers: [registry],
    async collect() {
      this.set((await read()).sites);
    },
  });
}
