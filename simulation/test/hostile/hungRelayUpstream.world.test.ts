import { afterAll, describe, expect, it } from 'vitest';
import { silentHop } from '../../src/world/hostile/wire2Attacks.js';
import { until } from '../support.js';
import { askPlan, nextPlans, planDone, runCount } from './plans.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, type World } from './world.js';

/**
 * relay-1 with two upstreams: a hop in front of the hub, then the hub itself. Once the hop has answered
 * (its round trip measured), it takes every request and never answers. The relay's request timeout is
 * ten minutes; its `forward.stallS` 2 s: each batch (and each blob upload) is cut once its answer is that
 * late and goes to the hub directly (docs/decisions/535-relay-cuts-a-stalled-upstream.md). Before, the
 * relay's whole uplink waited for the timeout on each try of the hung upstream, and for a blob upload
 * (no timeout) until TCP gave up.
 */

let world: World | undefined;
afterAll(() => world?.stop());

describe('hostile hop above the relay: its first upstream hangs', () => {
  it('a requested plan and its result still cross, through the second upstream, with the hung one cut as stalled', async () => {
    const hang = silentHop();
    world = await startVirtualWorld({
      relayUpstreams: ['proxy', 'hub'],
      relayForward: { stallS: 2, requestTimeoutMs: 600_000 },
    });
    const w = world;
    const hop = w.upstreamSide[0];
    if (!hop) throw new Error('the world has no upstream-side proxy');
    await until('the start-up run at the hub, through the hop', async () => (await runCount(w)) > 0, 180_000);
    expect(hop.seen.some((s) => s.path.startsWith('/v1/bundles') && s.status === 200)).toBe(true);
    hop.use(hang);
    const before = await runCount(w);
    nextPlans(w, 'ship-1', { changes: 'after the hop hung' });
    // the request comes down and the result goes up while the hop holds what it takes; 120 s is far
    // below the relay's 10-minute request timeout (a hang bound, not a speed check)
    await planDone(w, await askPlan(w), 120_000);
    await until('the new run at the hub', async () => (await runCount(w)) > before, 120_000);
    // and its detail blob, by whichever upstream takes it: an upload to the hop, which takes it and never
    // answers, is cut as a batch is (relay/test/tusBlobUploader.test.ts; tus has no timeout of its own)
    const details = await everyDetailArrives(w, 'ship-1', before + 1);
    expect(details.map((d) => d.detailState)).not.toContain('pending');
    expect(hang.held).toBeGreaterThan(0);
    const cut = w.logLines('relay-1', /forwarding failed/).filter((l) => l.code === 'stalled');
    expect(cut.length).toBeGreaterThan(0);
    expect(cut[0]?.upstream).toBe('up-0-proxy');
  });
});
