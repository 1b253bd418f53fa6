import { Gauge, type Registry } from 'prom-client';
import { meanOffset } from '../../core/views.js';
import type { AgentRow, HubStore } from '../../ports/HubStore.js';

/**
 * The clock gauges of `/metrics`: each site's estimated clock offset (its live agents' mean, agent minus
 * hub) and the ± bound of each agent's estimate, read from the store at each scrape, so an alert can fire
 * on a clock that drifts before it dates a plan wrong (docs/decisions/070-clock-offsets.md).
 */
export function registerClockGauges(registry: Registry, store: Pick<HubStore, 'listAgents'>): void {
  const live = async () => (await store.listAgents()).filter((a) => a.revokedAt === null);
  new Gauge({
    name: 'hub_site_clock_offset_seconds',
    help: "Estimated clock offset of each site's agents (mean of agent minus hub), seconds",
    labelNames: ['site'],
    registers: [registry],
    async collect() {
      this.reset();
      const bySite = new Map<string, AgentRow[]>();
      for (const a of await live()) bySite.set(a.site, [...(bySite.get(a.site) ?? []), a]);
      for (const [site, agents] of bySite) {
        const m = meanOffset(agents);
        if (m !== null) this.set({ site }, m / 1000);
      }
    },
  });
  new Gauge({
    name: 'hub_agent_clock_offset_uncertainty_seconds',
    help: "Half-width of the interval each agent's clock offset is known in (absent: a one-way bound only), seconds",
    labelNames: ['site', 'agent'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const a of await live())
        if (a.clockOffsetMs !== null && a.clockOffsetUncertaintyMs != null)
          this.set({ site: a.site, agent: a.agent }, a.clockOffsetUncertaintyMs / 1000);
    },
  });
}
