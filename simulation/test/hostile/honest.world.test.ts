import { afterAll, describe, expect, it } from 'vitest';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, type World } from './world.js';

let world: World | undefined;
afterAll(() => world?.stop());

describe('hostile harness, attack off', () => {
  it('carries a run and its detail through an honest proxy on both sides of relay-1', async () => {
    world = await startVirtualWorld({ agentsVia: 'proxy', relayUpstreams: ['proxy'] });
    const runs = await everyDetailArrives(world, 'ship-1');
    expect(runs.map((r) => r.detailState)).toEqual(['arrived']);
    // The traffic went through both proxies: the harness sits where it says it does.
    expect(world.agentSide?.seen.some((s) => s.path.startsWith('/v1/uploads'))).toBe(true);
    expect(world.upstreamSide[0]?.seen.some((s) => s.path.startsWith('/v1/bundles'))).toBe(true);
  });
});
