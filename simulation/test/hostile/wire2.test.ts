import { afterEach, describe, expect, it } from 'vitest';
import { alteredPullAnswers, flippedPushes } from '../../src/world/hostile/wire2Attacks.js';
import { until } from '../support.js';
import { everyDetailArrives, runsWithDetail, startWorld, type World } from './world.js';

/**
 * The hostile hop between an agent on hop v2 (`sync.wire: 2`) and relay-1 (decision 495): what it alters
 * is refused where it is checked, and nothing is lost once it stops.
 */
let world: World | undefined;
afterEach(async () => {
  // the agent's exchanges went through the hop on h2c, the default carrier, not HTTP/1.1 after a refusal
  const h2c = world?.agentSide?.h2cRequests();
  await world?.stop();
  expect(h2c).toBeGreaterThan(0);
  world = undefined;
});

describe('hostile hop, agent on hop v2', () => {
  it('flipped pushes: relay-1 checks the agent key it pinned and refuses them; everything arrives after', {
    timeout: 300_000,
  }, async () => {
    const attack = flippedPushes(2);
    world = await startWorld({ agentsVia: 'proxy', attacks: { agentSide: attack }, agentSync: { wire: 2 } });
    const w = world;
    await until('the attack to flip two pushes', async () => attack.flipped >= 2);
    const runs = await everyDetailArrives(w, 'ship-1');
    expect(runs.map((r) => r.detailState)).toEqual(['arrived']);
    await until(
      'the agent to have everything acknowledged',
      async () => (await w.agentStatus('ship-1')).unackedRuns === 0,
    );
    // each altered push was refused at relay-1 (403 bad-signature), before custody: the hub saw none
    expect(
      await w.relayMetric('driftline_hop_requests_total', { route: '/v2', status: '403' }),
    ).toBeGreaterThanOrEqual(2);
    expect(await w.hubMetric('hub_bundles_refused_total', { reason: 'bad-signature' })).toBe(0);
    // the agent reads each refusal as that push's receipt (as v1's), not as its credential refused
    const rejected = await w.logged('ship-1', /upstream rejected a bundle/, 2);
    expect(rejected.map((l) => l.code)).toEqual(['bad-signature', 'bad-signature']);
    expect(
      await w.relayMetric('driftline_hop_v2_messages_total', { kind: 'push', peer: 'ship-1' }),
    ).toBeGreaterThan(0);
  });

  it('altered acks in pull answers: the agent refuses them, prunes nothing on them, and is acked in the end', {
    timeout: 300_000,
  }, async () => {
    const attack = alteredPullAnswers();
    world = await startWorld({ agentsVia: 'proxy', attacks: { agentSide: attack }, agentSync: { wire: 2 } });
    const w = world;
    // The hub took the run at `receivedAt` and acked it after: an answer the hop altered from then on
    // carried that ack (or a later, cumulative one). Waiting for the first altered ack alone was not
    // enough: an ack of a push without a run (a start-up clock or heartbeat) can come first, and on a
    // loaded CI machine the plan was not yet recorded when the test read no unacknowledged run.
    await runsWithDetail(w, 'ship-1');
    const listed = (await (await w.api('/api/cells/ship-1/prod/network/runs')).json()) as {
      runs: Array<{ receivedAt: string }>;
    };
    const takenAt = Math.min(...listed.runs.map((r) => Date.parse(r.receivedAt)));
    await until(
      'the attack to alter an answer after the hub took the run',
      async () => attack.lastAt >= takenAt,
    );
    expect(
      await w.logged('ship-1', /downlink ack refused: not signed by the pinned hub key/),
    ).not.toHaveLength(0);
    expect((await w.agentStatus('ship-1')).unackedRuns).not.toBe(0);
    w.agentSide?.use(null);
    await until(
      'the agent to have everything acknowledged once the hop is honest',
      async () => (await w.agentStatus('ship-1')).unackedRuns === 0,
    );
    const runs = await everyDetailArrives(w, 'ship-1');
    expect(runs.map((r) => r.detailState)).toEqual(['arrived']);
  });
});
