import { afterAll, describe, expect, it } from 'vitest';
import { alteredDownlink } from '../../src/world/hostile/attacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, type World } from './world.js';

let world: World | undefined;
afterAll(() => world?.stop());

describe('hostile relay (b): altered downlink copies with genuine ids on one upstream of a relay with two', () => {
  it('delivers the genuine plan request and acks through the other upstream; every altered copy is counted at the relay and refused at the agent', async () => {
    const attack = alteredDownlink();
    // relay-1 pulls from both upstreams: the hostile one first in its list, the hub directly second.
    world = await startVirtualWorld({
      relayUpstreams: ['proxy', 'hub'],
      attacks: { upstreamSide: [attack] },
    });
    const w = world;
    await everyDetailArrives(w, 'ship-1');
    const req = await until('the hub to accept a plan request', async () => {
      const r = await w.api('/api/plan-requests', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ site: 'ship-1', environment: 'prod', component: 'network' }),
      });
      return r.ok ? ((await r.json()) as { requestId: string }) : false;
    });
    const done = await until('the plan request to be done', async () => {
      const b = (await (await w.api(`/api/plan-requests/${req.requestId}`)).json()) as {
        state: string;
        runId: string | null;
      };
      return b.state === 'done' ? b : false;
    });
    expect(done.runId).toMatch(/^[0-9A-Z]{26}$/);
    // Nothing lost on the way: every run of the cell has its detail at the hub.
    await everyDetailArrives(w, 'ship-1');
    // Genuine acks came through too: nothing unacknowledged at the agent.
    await until('the agent to have everything acknowledged', async () => {
      const s = await w.agentStatus('ship-1');
      return s.unackedRuns === 0 && s.blobsAwaitingReceipt === 0;
    });
    // The attack fired, each altered copy was counted at relay-1 and refused (by upstream) at the agent.
    expect(attack.altered).toBeGreaterThanOrEqual(2);
    const conflicts = await w.relayMetric('driftline_relay_downlink_conflicts_total', { site: 'ship-1' });
    expect(conflicts).toBeGreaterThanOrEqual(2);
    await w.logged('relay-1', /downlink copy differs/);
    await w.logged('ship-1', /not signed by the pinned hub key/, 2);
    // the altered plan request may be refused after the altered acks: wait (bounded) until it is logged
    await until('the agent to refuse the altered plan request', async () =>
      w.logLines('ship-1', /not signed by the pinned hub key/).some((l) => l.kind === 'control'),
    ).catch(() => undefined);
    const refused = w.logLines('ship-1', /not signed by the pinned hub key/);
    expect(refused.every((l) => l.upstream === w.relayUrl)).toBe(true);
    expect(refused.map((l) => l.kind)).toContain('control');
  });
});
