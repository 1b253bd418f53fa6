import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../../adapters/memory/MemoryHubStore.js';
import type { AgentRow } from '../../ports/HubStore.js';
import { declaredByEnvironment, declaredBySite, siteBriefs } from './siteContext.js';

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
