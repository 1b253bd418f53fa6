import { Gauge, type Registry } from 'prom-client';
import type { Drift } from './core/drift/Drift.js';
import type { Queries } from './core/Queries.js';

/**
 * Gauges read at each scrape (decision 421): open drift episodes not waived, waived ones, failing-check
 * episodes, and sites their contact plan judges overdue.
 */
export function registerDriftGauges(
  registry: Registry,
  drift: Pick<Drift, 'counts'>,
  queries: Pick<Queries, 'siteContacts'>,
  clock: { now(): number },
): void {
  const episodes = new Gauge({
    name: 'hub_drift_episodes',
    help: 'Open episodes by state: open (drift, not waived), waived, check (failing checks)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const c = await drift.counts();
      this.set({ state: 'open' }, c.open);
      this.set({ state: 'waived' }, c.waived);
      this.set({ state: 'check' }, c.checks);
    },
  });
  void episodes;
  new Gauge({
    name: 'hub_sites_overdue',
    help: 'Sites their contact plan judges overdue',
    registers: [registry],
    async collect() {
      const sites = await queries.siteContacts(clock.now());
      this.set(sites.filter((s) => s.contact.judged && s.contact.state === 'overdue').length);
    },
  });
}
