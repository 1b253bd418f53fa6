import { afterAll, describe, expect, it } from 'vitest';
import { fakeTusCompletion } from '../../src/world/hostile/attacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, runsWithDetail, type World } from './world.js';

let world: World | undefined;
afterAll(() => world?.stop());

describe('hostile relay (a): fake tus completion', () => {
  it('keeps the detail blob until the hub receipts it, uploads it again, and it arrives once the path is honest', async () => {
    const attack = fakeTusCompletion();
    world = await startVirtualWorld({ agentsVia: 'proxy', attacks: { agentSide: attack } });
    const w = world;
    // The summary passes (bundles are not attacked); the detail is "uploaded" into the void.
    const [run] = await runsWithDetail(w, 'ship-1');
    await until('the attack to fake a completion', async () => attack.completed >= 1);
    // No false arrival: the hub says pending, and the agent counts the blob as awaiting a hub receipt.
    expect((await runsWithDetail(w, 'ship-1')).map((r) => r.detailState)).toEqual(['pending']);
    const held = await until('the agent to count the blob awaiting a receipt', async () => {
      const s = await w.agentStatus('ship-1');
      return (s.blobsAwaitingReceipt as number) >= 1 ? s : false;
    });
    expect(held.blobsPending).toBeGreaterThanOrEqual(1);
    // The hub's run view says where the agent's signed facts put the detail: at a hop, no receipt yet.
    const pending = await until('the hub to say where the detail is', async () => {
      const r = (await (await w.api(`/api/runs/${run?.runId}`)).json()) as {
        detailPending?: { uploadedTo: string | null; text: string };
      };
      return r.detailPending?.uploadedTo ? r.detailPending : false;
    });
    expect(pending.uploadedTo).toBe(w.agentSide?.url);
    const hop = (w.agentSide?.url ?? '').replace(/[.]/g, '\\.');
    expect(pending.text).toMatch(
      new RegExp(
        `^detail: pending at ship-1 \\(uploaded to ${hop} at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, no receipt yet\\)$`,
      ),
    );
    // After sync.resendAfterS without a hub receipt the agent uploads it again (here into the void again).
    await until('the agent to upload the blob again', async () => attack.completed >= 2);
    const again = await w.logged('ship-1', /no hub receipt/);
    expect(again[0]?.upstream).toBe(w.agentSide?.url);

    // An honest path: the next upload reaches the hub, whose ack frees the agent's copy.
    w.agentSide?.use(null);
    const arrived = await everyDetailArrives(w, 'ship-1');
    expect(arrived.map((r) => r.runId)).toEqual([run?.runId]);
    const after = (await (await w.api(`/api/runs/${run?.runId}`)).json()) as Record<string, unknown>;
    expect(after.detailState).toBe('arrived');
    expect(after.detailPending).toBeUndefined();
    await until('the agent to hold no blob awaiting a receipt', async () => {
      const s = await w.agentStatus('ship-1');
      return s.blobsAwaitingReceipt === 0 && s.blobsPending === 0;
    });
  });
});
