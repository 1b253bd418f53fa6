import { afterAll, describe, expect, it } from 'vitest';
import { runProgram } from '../../src/topology/programs.js';
import { dripV2Pulls, eatV2Control, silentHop, silentV2Pulls } from '../../src/world/hostile/wire2Attacks.js';
import { until } from '../support.js';
import { addHubUpstream, askPlan, planDone } from './plans.js';
import { startWorld, type World } from './world.js';

/**
 * `twoUpstreams` and `stallingUpstream` with the agent on hop v2 (docs/decisions/495-hop-v2-on-the-agent-link.md),
 * in one world: the agent's first upstream is a hop in front of relay-1, its second the hub itself, both
 * spoken to in v2. The hop (1) eats the control items of v2 pull answers, then (2) holds v2 pulls without
 * a word, then (3) drips their answers. Each upstream's downlink is its own lane (decision 410): every plan
 * request comes through the hub and is acted on once, and the hostile lane's answers are cut after
 * `sync.stallS`, counted, and named by `edge-agent status`.
 */

let world: World | undefined;
afterAll(() => world?.stop());

type Upstream = { url: string; stalls: number; lastStallAt: number | null };

describe('hostile hop, agent on hop v2 with two upstreams, the first eating then stalling its downlink', () => {
  it('takes every plan request from the hub once, and cuts the silent and dripping pulls', {
    timeout: 300_000,
  }, async () => {
    // Holds of 10 s: a v2 pull asks its hold up to what the registration stated (relay-1's, hours), and an
    // answer is due only within its hold (decision 410), so a pull held silent is cut 10 s + 3 s later.
    world = await startWorld({ agentsVia: 'proxy', agentSync: { wire: 2, stallS: 3, downlinkHoldS: 10 } });
    const w = world;
    const proxy = w.agentSide;
    if (!proxy) throw new Error('the world has no agent-side proxy');
    await until('the start-up run at the hub', async () => {
      const r = await w.api('/api/cells/ship-1/prod/network/runs');
      return r.ok && ((await r.json()) as { runs: unknown[] }).runs.length > 0;
    });
    const agent = await addHubUpstream(w);
    const eat = eatV2Control();
    proxy.use(eat);
    w.start('ship-1');
    const once = async (id: string) => {
      const received = (await w.logged('ship-1', /plan request received/)).filter((l) => l.requestId === id);
      expect(received).toHaveLength(1);
    };

    // (1) the first upstream eats control: the request comes through the hub, acted on once
    const first = await askPlan(w);
    expect((await planDone(w, first)).deliveredAt).not.toBeNull();
    await until('the hop to eat a copy of the request', async () => eat.eaten > 0, 60_000);
    await once(first);
    // both upstreams spoke v2: the relay's pulls came through the hop, the hub took the agent's messages
    expect(
      await w.relayMetric('driftline_hop_v2_messages_total', { kind: 'pull', peer: 'ship-1' }),
    ).toBeGreaterThan(0);
    expect(await w.hubMetric('driftline_hop_v2_messages_total', { peer: 'ship-1/a1' })).toBeGreaterThan(0);

    const stalled = async (atLeast: number) =>
      until(`the agent to count ${atLeast} stall(s) of ${proxy.url}`, async () => {
        const s = await w.agentStatus('ship-1');
        const up = (s.upstreams as Upstream[]).find((u) => u.url === proxy.url);
        return up && up.stalls >= atLeast && (s.upstreamStalls as number) >= atLeast ? up : false;
      });

    // (2) v2 pulls held without a word: the request comes through the hub, the silent pulls are cut
    const silent = silentV2Pulls();
    proxy.use(silent);
    const second = await askPlan(w);
    await planDone(w, second);
    await once(second);
    await until('the hop to hold a pull', async () => silent.held > 0);
    const a = await stalled(1);
    expect(a.lastStallAt).not.toBeNull();
    await w.logged('ship-1', /stalled and was cut/);
    const text = await runProgram('agent', ['status', '--config', agent.config], { cwd: agent.cwd });
    expect(text).toMatch(new RegExp(`${proxy.url.replace(/[.]/g, '\\.')}.*\\n\\s+STALLED`));

    // (3) v2 answers dripped a byte at a time: cut under the floor rate, control still comes through
    const drip = dripV2Pulls(250);
    proxy.use(drip);
    const third = await askPlan(w);
    await planDone(w, third);
    await once(third);
    await until('the agent to cut a dripping answer', async () => drip.cut > 0 && drip.dripped > 0);
    await stalled(a.stalls + 1);

    // (4) a hung relay: every request taken, none answered, pushes included. The result of a plan goes
    // up through the hub once the push to the hop is cut (after the hop's round trip, stallS and the
    // push's bytes at the floor rate), not after the request's timeout of 30 minutes
    const hung = silentHop();
    proxy.use(hung);
    const fourth = await askPlan(w);
    await planDone(w, fourth);
    await once(fourth);
    expect(hung.pushes).toBeGreaterThan(0);
    // on h2c, the default carrier: the silent and dripping answers were streams of one connection
    expect(proxy.h2cRequests()).toBeGreaterThan(0);
  });
});
