import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { uploadsDown } from '../../src/world/hostile/attacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, runsWithDetail, type World } from './world.js';

let world: World | undefined;
afterAll(() => world?.stop());

describe('an honest relay whose blob directory is deleted after it receipted', () => {
  it('still brings the detail to the hub: the relay drops the lost blob (logged, counted) and the agent uploads it again', async () => {
    const down = uploadsDown();
    // The agent uploads again only after 20 s: relay-1 first finds the file gone (a re-upload before it
    // would put the file back, and nothing would be lost to count).
    world = await startVirtualWorld({
      relayUpstreams: ['proxy'],
      attacks: { upstreamSide: [down] },
      agentSync: { resendAfterS: 20 },
    });
    const w = world;
    const blobs = join(w.relayDataDir, 'blobs');
    await runsWithDetail(w, 'ship-1');
    // relay-1 took the blob (tus completion to the agent) and cannot pass it on yet.
    await until('relay-1 to hold the blob', async () => existsSync(blobs) && readdirSync(blobs).length > 0);
    await until('the relay to try its upstream', async () => down.refused > 0);
    await until('the agent to wait for a hub receipt', async () => {
      const s = await w.agentStatus('ship-1');
      return (s.blobsAwaitingReceipt as number) >= 1;
    });
    rmSync(blobs, { recursive: true, force: true });
    w.upstreamSide[0]?.use(null);
    const arrived = await everyDetailArrives(w, 'ship-1');
    expect(arrived.map((r) => r.detailState)).toEqual(['arrived']);
    await until('the agent to hold no blob awaiting a receipt', async () => {
      const s = await w.agentStatus('ship-1');
      return s.blobsAwaitingReceipt === 0 && s.blobsPending === 0;
    });
    // The loss was logged and counted at the relay, and the agent's second upload was logged.
    expect(await w.relayMetric('driftline_relay_blobs_lost_total')).toBeGreaterThanOrEqual(1);
    await w.logged('relay-1', /gone from disk/);
    await w.logged('ship-1', /no hub receipt/);
  });
});
