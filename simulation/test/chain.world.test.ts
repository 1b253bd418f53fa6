import { afterAll, describe, expect, it } from 'vitest';
import { askPlan, cellTimes, planDone } from './hostile/plans.js';
import { startVirtualWorld } from './hostile/virtualWorld.js';
import type { World } from './hostile/world.js';
import { until } from './support.js';

/**
 * agent → relay → relay → hub (docs/decisions/540-deterministic-world.md): the ship's LAN relay (`ship-lan`)
 * in front of the ground station (relay-1), which talks to the hub; every node in one process on virtual
 * time, each link the world's LAN (2 ms each way). Results go up both relays, the hub's acks and a plan
 * request come down them, and the hub serves the run.
 */
let w: World | null = null;
afterAll(async () => {
  await w?.stop();
});

describe('agent → relay → relay → hub (the deterministic world)', () => {
  it('carries results up two relays, acks and a plan request down them, and the hub serves the run', async () => {
    w = await startVirtualWorld({
      sites: ['ship-7'],
      innerRelay: 'ship-lan',
      relayForward: { pullIntervalMs: 1000, backoffMaxMs: 3000 },
      // as the program defaults them: hop v2, and nothing sent again before 6 h (an ack that did not come
      // down both relays is not covered by a resend)
      agentSync: { wire: 2, resendAfterS: 21_600 },
    });
    const world = w;
    const began = Date.now();
    const status = async () =>
      (await world.agentStatus('ship-7')) as unknown as { unackedRuns: number; lastAckAt: number | null };

    // The hub knows the cell from the agent's declared facts; ask for a plan of it: the request goes down two relays.
    await until('the agent to report in', async () => {
      const r = await world.api('/api/sites/ship-7');
      return (
        r.ok &&
        ((await r.json()) as { agents: Array<{ lastContactAt: string | null }> }).agents[0]?.lastContactAt
      );
    });
    const reportedMs = Date.now() - began;
    // The hub's first ack reached the agent: it says the hub reads confirmations written apart from
    // their cells, so the request's plan (the same plan again) is written so (decision 330).
    await until('the first ack at the agent', async () => (await status()).lastAckAt !== null);
    const firstAckMs = Date.now() - began;
    // The first ack may carry only the declared facts: wait (bounded) for the cell's first plan at the hub.
    const firstPlannedAt = await until('the first plan of the cell at the hub', async () => {
      const at = (await cellTimes(world, 'ship-7')).plannedAt;
      return at > 0 ? at : false;
    });
    const asked = Date.now();
    const requestId = await askPlan(world, 'ship-7');
    const done = await planDone(world, requestId);
    const requestMs = Date.now() - asked;
    expect(done.runId).toMatch(/^[0-9A-Z]{26}$/);
    const matrix = (await (await world.api('/api/matrix?site=ship-7')).json()) as {
      cells: Array<{ status: string; runId: string }>;
    };
    expect(matrix.cells.map((c) => c.status)).not.toContain('no-data');
    const run = (await (await world.api(`/api/runs/${done.runId}`)).json()) as {
      summary: { component: string };
    };
    expect(run.summary.component).toBe('network');
    // The confirmation moved the cell's age at the hub, as a rewritten cell did.
    await until(
      'the confirmation to move the cell at the hub',
      async () => (await cellTimes(world, 'ship-7')).plannedAt > firstPlannedAt,
    );
    // The hub's ack came back down both relays: the agent holds nothing unacknowledged.
    await until('the agent to have everything acknowledged', async () => {
      const s = await status();
      return s.unackedRuns === 0 && s.lastAckAt !== null;
    });
    const ackedMs = Date.now() - asked;
    // The agent's one upstream is ship-lan; relay-1 (the ground station) forwarded what ship-lan gave it.
    expect(await world.relayMetric('driftline_relay_forwards_total', { result: 'ok' })).toBeGreaterThan(0);
    console.info(JSON.stringify({ reportedMs, firstAckMs, requestMs, ackedMs }));
    // In world time (the process test waited up to 90 s for each): the agent reports in within its first
    // round; the first ack is down both relays within 3 s (each relay pulls its downlink once a second
    // when no pull is held); the plan request is down both relays, planned and its result up at the hub
    // within 3 s (a relay's pull interval each, and the agent's sync interval); and the ack of it is down
    // within 2 s more.
    expect(reportedMs).toBeLessThanOrEqual(1_000);
    expect(firstAckMs).toBeLessThanOrEqual(3_000);
    expect(requestMs).toBeLessThanOrEqual(3_000);
    expect(ackedMs).toBeLessThanOrEqual(5_000);
  });
});
