import { afterAll, describe, expect, it } from 'vitest';
import { fakeReceipts } from '../../src/world/hostile/attacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, type World } from './world.js';

/**
 * A hop below relay-1 fakes the receipts of the agent's bundles, then turns honest: the changes go up
 * again once the receipts grow stale, but the detail blobs' announcements rode on the faked bundles.
 * The hub holds the blobs, so it must receipt them whatever happened to their announcement, and the
 * agent's re-uploads meanwhile are bounded and counted (docs/decisions/412-every-held-blob-receipted.md).
 * The agent speaks hop v1 (`sync.wire: 1`): the attack rewrites v1's receipts (`POST /v1/bundles`), which a
 * v2 agent never asks for. The same attack on v2's custody is wire2AgentLink.test.ts's `fake custody`.
 */

let world: World | undefined;
afterAll(() => world?.stop());

describe('hostile relay: faked receipts for the bundles that announced detail blobs', () => {
  it('gets every blob the hub holds receipted, and the agent lets go of them', async () => {
    const fake = fakeReceipts();
    world = await startVirtualWorld({
      agentsVia: 'proxy',
      agentSync: { wire: 1 },
      attacks: { agentSide: fake },
    });
    const w = world;
    const proxy = w.agentSide;
    if (!proxy) throw new Error('the world has no agent-side proxy');
    // The start-up run's bundle was "receipted" by the hop, and its detail went up by tus (honestly).
    const awaiting = await until('the agent to upload the detail and wait for a hub receipt', async () => {
      const s = await w.agentStatus('ship-1');
      return fake.faked > 0 && (s.blobsAwaitingReceipt as number) >= 1
        ? (s.blobsAwaitingReceipt as number)
        : false;
    });
    proxy.use(null);
    // The changes go up again once the faked receipt is stale (resendAfterS 4), and the hub has the detail.
    const arrived = await everyDetailArrives(w, 'ship-1');
    expect(arrived.map((r) => r.detailState)).toEqual(['arrived']);
    const done = await until(
      'the hub to receipt every held blob',
      async () => {
        const s = await w.agentStatus('ship-1');
        return s.blobsAwaitingReceipt === 0 && s.blobsPending === 0 ? s : false;
      },
      120_000,
    );
    // Each upload again was logged and counted, and there were few (the wait doubles each time).
    const again = w.logLines('ship-1', /uploaded again/).length;
    expect(done.blobReuploads).toBe(again);
    expect(again).toBeLessThanOrEqual(3 * awaiting);
  });
});
