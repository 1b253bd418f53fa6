import { FleetResponseSchema } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRow } from '../src/ports/HubStore.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

/**
 * Issue 59: an upstream that sat on an agent's custody past its deadline (the agent's `custodyOverdue`
 * fact, on its row and brief) is named in `/api/fleet`'s grouped attention and on `/metrics`
 * (docs/decisions/575-custody-deadline-per-path.md).
 */

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

const MIN = 60_000;

function agent(
  site: string,
  name: string,
  custody: AgentRow['custodyOverdue'],
  revokedAt: number | null = null,
) {
  const row: AgentRow = {
    site,
    agent: name,
    publicKey: 'ed25519:x',
    enrolledAt: 1,
    revokedAt,
    version: '0.1.0',
    lastContactAt: 1,
    queueDepth: 0,
    oldestUnsentAt: null,
    clockOffsetMs: 0,
    offsetSampledAt: null,
    upstream: null,
    cadenceS: {},
    contactIntervalS: 600,
    contactWindows: [],
    custodyOverdue: custody,
  };
  return row;
}

const sat = (upstream: string, results: number, oldestAt: number) => ({
  upstream,
  results,
  oldestAt,
  since: oldestAt + MIN,
  resends: 1,
  episode: oldestAt + MIN,
});

/**
 * The fixture's ship-7 (its relay peer is `relay-1`) finds `http://relay-1:7000` sitting on 13 results,
 * the oldest 14 min old; mine-3 finds an upstream the hub knows no relay of sitting on 2; a revoked
 * agent's last word is nobody's concern.
 */
async function sitting(h: TestHub) {
  const now = h.clock.now();
  const [ship] = await h.hub.store.listAgents('ship-7');
  if (!ship) throw new Error('no ship-7 agent');
  await h.hub.store.commit({
    agents: [
      { ...ship, custodyOverdue: [sat('http://relay-1:7000', 13, now - 14 * MIN)] },
      agent('mine-3', 'a1', [sat('https://10.1.2.3:7443', 2, now - 3 * MIN)]),
      agent('old-9', 'a1', [sat('http://relay-1:7000', 40, now - 60 * MIN)], now - MIN),
    ],
  });
}

describe('upstreams sitting on custody, at the hub (issue 59)', () => {
  it("are a group of the fleet's attention, one row per upstream, a relay named, and counted", async () => {
    const h = await startHub();
    hubs.push(h);
    await sitting(h);
    const viewer = await addTestUser(h.hub.store, 'wall', ['viewer']);
    const res = await fetch(`${h.url}/api/fleet`, { headers: { authorization: viewer.authorization } });
    expect(res.status).toBe(200);
    const groups = FleetResponseSchema.parse(await res.json()).attentionGroups;
    if (!groups) throw new Error('no attentionGroups in /api/fleet');
    const rows = groups.rows.filter((r) => r.kind === 'custody-overdue');
    expect(rows.map((r) => r.text)).toEqual([
      'relay-1 holds 13 results past their deadline, oldest 14 min (site ship-7)',
      'https://10.1.2.3:7443 holds 2 results past their deadline, oldest 3 min (site mine-3)',
    ]);
    expect(rows[0]).toMatchObject({
      upstream: 'relay-1',
      relay: 'relay-1',
      results: 13,
      sites: 1,
      agents: 1,
      siteNames: ['ship-7'],
      filter: { view: 'links', relay: 'relay-1' },
    });
    expect(rows[1]).toMatchObject({ upstream: 'https://10.1.2.3:7443', relay: null });
    expect(groups.counts.custodyUpstreams).toBe(2);
  });

  it('are gauges on /metrics: results held by upstream, and the sites they hold for', async () => {
    const h = await startHub();
    hubs.push(h);
    const viewer = await addTestUser(h.hub.store, 'wall', ['viewer']);
    const scrape = async () =>
      (await fetch(`${h.url}/metrics`, { headers: { authorization: viewer.authorization } })).text();
    const before = await scrape();
    expect(before).toMatch(/^hub_custody_overdue_sites 0$/m);
    expect(before).not.toMatch(/^hub_custody_overdue_results\{/m);
    await sitting(h);
    const text = await scrape();
    expect(text).toMatch(/^hub_custody_overdue_results\{upstream="relay-1"\} 13$/m);
    expect(text).toMatch(/^hub_custody_overdue_results\{upstream="https:\/\/10\.1\.2\.3:7443"\} 2$/m);
    expect(text).toMatch(/^hub_custody_overdue_sites 2$/m);
  });
});
