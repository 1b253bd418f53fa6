import { afterAll, describe, expect, it } from 'vitest';
import { flippedBytes } from '../../src/world/hostile/attacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, runsWithDetail, type World } from './world.js';

let world: World | undefined;
afterAll(() => world?.stop());

describe('hostile relay (f): flipped bytes in bundles and blobs', () => {
  it('refuses every altered bundle and blob where it is checked, counts and logs each, and loses nothing', async () => {
    const attack = flippedBytes({ bundles: 2, patches: 2 });
    world = await startVirtualWorld({
      agentsVia: 'proxy',
      attacks: { agentSide: attack },
      agentSync: { rejectedRetryS: 2 },
    });
    const w = world;
    // Once the budget is spent the hop is honest: every run and its detail arrive whole.
    await until('the attack to flip bundles and blobs', async () => {
      return attack.flipped.bundles >= 2 && attack.flipped.patches >= 2;
    });
    const runs = await everyDetailArrives(w, 'ship-1');
    expect(runs.map((r) => r.detailState)).toEqual(['arrived']);
    await until('the agent to have everything acknowledged', async () => {
      const s = await w.agentStatus('ship-1');
      return s.unackedRuns === 0 && s.blobsPending === 0 && s.blobsAwaitingReceipt === 0;
    });
    // Blobs: relay-1 checks the bytes against the announced sha256 and refuses each altered upload.
    expect(
      await w.relayMetric('driftline_relay_refusals_total', { reason: 'checksum-mismatch', peer: 'ship-1' }),
    ).toBe(2);
    expect(await w.logged('relay-1', /upload refused: its bytes do not hash/, 2)).toHaveLength(2);
    // Bundles: relay-1 cannot check an agent's signature; the hub can, and refuses each altered one.
    expect(await w.hubMetric('hub_bundles_refused_total', { reason: 'bad-signature' })).toBe(2);
    // The hub's receipts say so to relay-1, which logs them and drops its altered copies.
    const codes = () =>
      w
        .logLines('relay-1', /upstream refused bundles for good/)
        .flatMap((l) => (l.receipts as Array<{ code: string }>).map((r) => r.code));
    await until('relay-1 to log both refusals', async () => codes().length >= 2);
    expect(codes()).toEqual(['bad-signature', 'bad-signature']);
    await w.logged('ship-1', /the hub rejected this agent's bundles \(bad-signature\)/);
    // No false arrival on the way: the run at the hub is the one the agent recorded, and only one.
    expect((await runsWithDetail(w, 'ship-1')).length).toBe(1);
  });
});
