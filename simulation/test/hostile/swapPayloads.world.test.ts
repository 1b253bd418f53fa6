import { afterAll, describe, expect, it } from 'vitest';
import { swapPayloads } from '../../src/world/hostile/clockAttacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, type World } from './world.js';

/**
 * Case (g) of issue 29 (docs/decisions/230-time-a-hop-cannot-forge.md): a hop below an honest relay swaps
 * bundle posts between two sites' agents. Each agent signs its own bundles and each site's token covers
 * only its site, so relay-1 refuses every swapped bundle (counted and logged); nothing is stored under
 * the wrong agent, and once the path is honest every run arrives, dated within the stated uncertainty.
 */

let world: World | undefined;
afterAll(() => world?.stop());

describe('hostile relay (g): payloads swapped between agents', () => {
  it('refuses every swapped bundle, loses nothing, misdates nothing', async () => {
    const swap = swapPayloads();
    world = await startVirtualWorld({ sites: ['ship-1', 'ship-2'], agentsVia: 'proxy' });
    const w = world;
    w.agentSide?.use(swap);
    await until('the hop to swap a post', async () => swap.swapped > 0, 180_000);
    await until(
      'relay-1 to refuse a bundle from a site the posting agent does not act for',
      async () =>
        (await w.relayMetric('driftline_relay_peer_refusals_total', { reason: 'foreign-site' })) > 0,
    );
    await w.logged('relay-1', /refused a downstream peer/);
    w.agentSide?.use(null);
    for (const site of w.sites) {
      const runs = await everyDetailArrives(w, site);
      expect(runs.length).toBeGreaterThan(0);
      const m = (await (await w.api(`/api/matrix?site=${site}`)).json()) as {
        cells: Array<{ plannedAt: string; receivedAt: string }>;
      };
      const s = (await (await w.api(`/api/sites/${site}`)).json()) as {
        agents: Array<{ agent: string; clockOffsetUncertaintyMs: number | null; clockHeld?: unknown }>;
      };
      // One machine: the true offset is 0, so a result is dated no later than it arrived.
      for (const c of m.cells) expect(Date.parse(c.plannedAt)).toBeLessThanOrEqual(Date.parse(c.receivedAt));
      expect(s.agents.map((a) => a.agent)).toEqual(['a1']);
    }
  });
});
