import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../../adapters/memory/MemoryHubStore.js';
import type { AgentRow } from '../../ports/HubStore.js';
import { declaredByEnvironment, declaredBySite, emptySiteRow, siteBriefs, siteRows } from './siteContext.js';

const agent = (site: string, name: string, cadenceS: Record<string, number>): AgentRow => ({
  site,
  agent: name,
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt: null,
  version: null,
  lastContactAt: null,
  queueDepth: null,
  oldestUnsentAt: null,
  clockOffsetMs: null,
  offsetSampledAt: null,
  upstream: null,
  cadenceS,
  contactIntervalS: null,
  contactWindows: [],
});

describe('declaredBySite', () => {
  it('counts declared cells from briefs as from the rows, a key two agents share once', async () => {
    const store = new MemoryHubStore();
    const agents = [
      agent('one', 'a1', { 'prod/dns': 60, 'prod/net': 60, 'dev/dns': 60, 'prod/dns@v2': 60 }),
      agent('two', 'a1', { 'prod/dns': 60, 'dev/dns': 60 }),
      agent('two', 'a2', { 'prod/dns': 60, 'prod/net': 60 }),
    ];
    await store.commit({ agents });
    const declared = await declaredBySite(store, await siteBriefs(store));
    expect(Object.fromEntries(declared.get('one') ?? [])).toEqual({ prod: 2, dev: 1 });
    // Summing the two briefs would say prod: 3.
    expect(Object.fromEntries(declared.get('two') ?? [])).toEqual({ prod: 2, dev: 1 });
    for (const site of ['one', 'two'])
      expect(declared.get(site)).toEqual(declaredByEnvironment(agents.filter((a) => a.site === site)));
  });
});

describe('siteRows', () => {
  it('reads the rows of many named sites in two reads, not two a site, with the same answer', async () => {
    const store = new MemoryHubStore();
    const agents = Array.from({ length: 120 }, (_, i) => agent(`s${String(i).padStart(3, '0')}`, 'a1', {}));
    await store.commit({ agents, sites: agents.map((a) => ({ ...emptySiteRow(a.site), lastContactAt: 5 })) });
    const reads = { getSite: 0, listAgents: 0, listSites: 0 };
    const counted = {
      getSite: (s: string) => {
        reads.getSite++;
        return store.getSite(s);
      },
      listAgents: (s?: string) => {
        reads.listAgents++;
        return store.listAgents(s);
      },
      listSites: () => {
        reads.listSites++;
        return store.listSites();
      },
    };
    const few = ['s001', 's007'];
    const many = agents.filter((_, i) => i % 2 === 0).map((a) => a.site);
    const small = await siteRows(counted, few);
    expect(reads).toEqual({ getSite: 2, listAgents: 2, listSites: 0 });
    expect([...small.rows.keys()]).toEqual(few);
    const big = await siteRows(counted, many);
    expect(reads).toEqual({ getSite: 2, listAgents: 3, listSites: 1 });
    expect(big.names).toEqual(many);
    expect([...big.rows.keys()].sort()).toEqual([...many].sort());
    expect([...big.agents.keys()].sort()).toEqual([...many].sort());
    expect(big.rows.get('s000')?.lastContactAt).toBe(5);
  });
});
