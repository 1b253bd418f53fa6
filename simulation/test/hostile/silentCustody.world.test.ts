import { afterEach, describe, expect, it } from 'vitest';
import { fakeReceipts } from '../../src/world/hostile/attacks.js';
import { fakeCustody, silentHop } from '../../src/world/hostile/wire2Attacks.js';
import { until } from '../support.js';
import { addHubUpstream, askPlan, nextPlans, planDone } from './plans.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * Issue 59, silent custody: the agent's first upstream is a hop that takes custody of every push and
 * forwards nothing; its second is honest (the hub itself). A result must not wait for `resendAfterS`
 * (a day here): once the sitter's custody deadline passes it goes by the honest upstream, the sitter is
 * named in `edge-agent status`, and later results go the honest way from the start
 * (docs/decisions/575-custody-deadline-per-path.md).
 */
const DEADLINE_S = 30;

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

describe('hostile relay: a hop that sits on custody', () => {
  for (const wire of [1, 2] as const)
    it(`sends what it sat on by the honest upstream once its deadline passes, and names it (hop v${wire})`, async () => {
      const sit = wire === 1 ? fakeReceipts() : fakeCustody();
      world = await startVirtualWorld({
        agentsVia: 'proxy',
        agentSync: { wire, resendAfterS: 86_400, custodyDeadlineS: DEADLINE_S, contactIntervalS: 5 },
      });
      const w = world;
      const proxy = w.agentSide;
      if (!proxy) throw new Error('the world has no agent-side proxy');
      await until('the start-up run at the hub', async () => {
        const r = await w.api('/api/cells/ship-1/prod/network/runs');
        return r.ok && ((await r.json()) as { runs: unknown[] }).runs.length > 0;
      });
      await addHubUpstream(w);
      proxy.use(sit);
      w.start('ship-1');

      // The first result after the sitter came: it holds it until the deadline, then the hub has it.
      nextPlans(w, 'ship-1', { changes: 'first change' });
      const asked = Date.now();
      const first = await planDone(w, await askPlan(w), 200_000);
      const firstS = (Date.now() - asked) / 1000;
      expect(first.runId).not.toBeNull();
      expect(sit.faked).toBeGreaterThan(0);
      expect(firstS).toBeGreaterThanOrEqual(DEADLINE_S);
      expect(firstS).toBeLessThan(DEADLINE_S * 3);
      const said = await until('the agent to log the resend', async () => {
        const lines = await w.logged('ship-1', /took custody .* and the hub has not acknowledged it/);
        return lines.length > 0 ? lines : false;
      });
      expect(said[0]).toMatchObject({ upstream: proxy.url, via: w.hubUrl });
      const status = await w.agentStatus('ship-1');
      expect(status.custodyOverdue).toEqual([
        expect.objectContaining({ upstream: proxy.url, resends: 1, results: expect.any(Number) }),
      ]);

      // The hub hears of it from the agent: the site view names the sitter.
      const atHub = await until('the hub to name the sitter', async () => {
        const site = (await (await w.api('/api/sites/ship-1')).json()) as {
          agents: Array<{ custodyOverdue?: Array<{ upstream: string; results: number }> }>;
        };
        return site.agents[0]?.custodyOverdue?.length ? site.agents[0].custodyOverdue : false;
      });
      expect(atHub).toEqual([expect.objectContaining({ upstream: proxy.url })]);

      // The next result goes the honest way at once: the sitter is passed over.
      const fakedBefore = sit.faked;
      nextPlans(w, 'ship-1', { changes: 'second change' });
      const asked2 = Date.now();
      await planDone(w, await askPlan(w), 200_000);
      const secondS = (Date.now() - asked2) / 1000;
      expect(secondS).toBeLessThan(DEADLINE_S);
      expect(sit.faked).toBe(fakedBefore);
    });

  for (const wire of [1, 2] as const)
    it(`sends what an honest relay holds by the hub once the relay's own upstream stays silent past the deadline (hop v${wire})`, async () => {
      world = await startVirtualWorld({
        relayUpstreams: ['proxy'],
        agentSync: { wire, resendAfterS: 86_400, custodyDeadlineS: DEADLINE_S, contactIntervalS: 5 },
      });
      const w = world;
      const above = w.upstreamSide[0];
      if (!above) throw new Error('relay-1 has no upstream proxy');
      await until('the start-up run at the hub', async () => {
        const r = await w.api('/api/cells/ship-1/prod/network/runs');
        return r.ok && ((await r.json()) as { runs: unknown[] }).runs.length > 0;
      });
      await addHubUpstream(w, 'ship-1', w.relayUrl);
      // relay-1 takes custody honestly; what it forwards (and asks) upstream is never answered
      const dead = silentHop();
      above.use(dead);
      w.start('ship-1');
      nextPlans(w, 'ship-1', { changes: 'held at relay-1' });
      const asked = Date.now();
      await planDone(w, await askPlan(w), 200_000);
      const heldS = (Date.now() - asked) / 1000;
      expect(dead.pushes).toBeGreaterThan(0);
      // it waited at relay-1 for the deadline (a minute past the start-up run's delivery), then went by the hub
      expect(heldS).toBeGreaterThanOrEqual(DEADLINE_S);
      expect(heldS).toBeLessThan(DEADLINE_S * 3);
      const status = await w.agentStatus('ship-1');
      expect(status.custodyOverdue).toEqual([expect.objectContaining({ upstream: w.relayUrl })]);
    });
});
