import { afterAll, describe, expect, it } from 'vitest';
import { fakeTusCompletion, flippedBytes } from '../../src/world/hostile/attacks.js';
import {
  captureV2,
  eatV2Control,
  fakeCustody,
  flippedHeartbeats,
  holdV2Pushes,
} from '../../src/world/hostile/wire2Attacks.js';
import { until } from '../support.js';
import {
  agentAtHub,
  askPlan,
  cellTimes,
  nextPlans,
  planDone,
  planRequest,
  reconfigureAgent,
  runCount,
} from './plans.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, runsWithDetail, type World } from './world.js';

/**
 * The attacks of the hostile suite on the agent's link, with the agent on hop v2
 * (docs/decisions/495-hop-v2-on-the-agent-link.md), one after another in one world: a hop between the
 * agent and relay-1 (and an honest one between relay-1 and the hub) fakes relay-1's custody
 * (`fakeReceipts`), fakes tus completions (`fakeTusCompletion`), flips upload bytes (`flippedBytes`), eats control from v2 pull answers
 * (`silentDrops` d), holds pushes (`clockLies`' hold), alters a heartbeat (decision 500), and replays the
 * agent's pushes and held pulls once it is gone (`silentDrops` e). Each step ends with the hop honest and
 * nothing lost, so the next starts from a settled site.
 */

let world: World | undefined;
afterAll(() => world?.stop());

const hop = () => {
  const p = (world as World).agentSide;
  if (!p) throw new Error('the world has no agent-side proxy');
  return p;
};

const settled = (w: World) =>
  until(
    'the agent to hold nothing unacknowledged',
    async () => {
      const s = await w.agentStatus('ship-1');
      return s.unackedRuns === 0 && s.blobsAwaitingReceipt === 0 && s.blobsPending === 0 ? s : false;
    },
    120_000,
  );

describe('hostile hop, agent on hop v2: the suite’s agent-link attacks', () => {
  it('fake custody: the changes go up again once it is stale, every held blob is receipted, re-uploads are few', async () => {
    const fake = fakeCustody();
    // contactIntervalS 5: the hub expects the agent's word within 3 × 5 s (the eaten request below).
    // relay-1 pulls its downlink every interval instead of watching it (watchS 0: as before an upstream
    // that holds watches, decision 620), so the hub's receipt for the first round's detail comes a pull
    // after the detail reached it: the detail waits for a receipt while the attack fakes custody.
    world = await startVirtualWorld({
      agentsVia: 'proxy',
      relayUpstreams: ['proxy'],
      relayForward: { watchS: 0 },
      agentSync: { wire: 2, contactIntervalS: 5, rejectedRetryS: 2, recordWindowS: 1 },
      attacks: { agentSide: fake },
    });
    const w = world;
    const awaiting = await until('the agent to upload the detail and wait for a hub receipt', async () => {
      const s = await w.agentStatus('ship-1');
      return fake.faked > 0 && (s.blobsAwaitingReceipt as number) >= 1
        ? (s.blobsAwaitingReceipt as number)
        : false;
    });
    hop().use(null);
    const arrived = await everyDetailArrives(w, 'ship-1');
    expect(arrived.map((r) => r.detailState)).toEqual(['arrived']);
    const done = await settled(w);
    const again = w.logLines('ship-1', /uploaded again/).length;
    expect(done.blobReuploads).toBe(again);
    expect(again).toBeLessThanOrEqual(3 * awaiting);
    // the honest path went through both hops (hostile/honest): v2 pushes and tus uploads through the one,
    // relay-1's batches through the other
    expect(hop().seen.some((s) => s.path === '/v2' && s.status === 200)).toBe(true);
    expect(hop().seen.some((s) => s.path.startsWith('/v1/uploads'))).toBe(true);
    expect(w.upstreamSide[0]?.seen.some((s) => s.path.startsWith('/v1/bundles'))).toBe(true);
  });

  it('fake tus completion: no false arrival; the blob is kept, uploaded again, and arrives once the path is honest', async () => {
    const w = world as World;
    const attack = fakeTusCompletion();
    hop().use(attack);
    nextPlans(w, 'ship-1', { changes: 'a new run, a new detail' });
    await planDone(w, await askPlan(w));
    await until('the attack to fake a completion', async () => attack.completed >= 1);
    const runs = await runsWithDetail(w, 'ship-1', 2);
    expect(runs.map((r) => r.detailState).sort()).toEqual(['arrived', 'pending']);
    const held = await until('the agent to count the blob awaiting a receipt', async () => {
      const s = await w.agentStatus('ship-1');
      return (s.blobsAwaitingReceipt as number) >= 1 ? s : false;
    });
    expect(held.blobsPending).toBeGreaterThanOrEqual(1);
    const [again] = await w.logged('ship-1', /uploaded again/);
    expect(again?.upstream).toBe(hop().url);
    hop().use(null);
    const arrived = await everyDetailArrives(w, 'ship-1', 2);
    expect(arrived.map((r) => r.detailState)).toEqual(['arrived', 'arrived']);
    await settled(w);
  });

  it('flipped tus bytes: relay-1 refuses each altered upload by its hash, and the detail arrives whole', async () => {
    const w = world as World;
    const flip = flippedBytes({ bundles: 0, patches: 2 });
    hop().use(flip);
    nextPlans(w, 'ship-1', { changes: 'a run whose detail is flipped on the way' });
    await planDone(w, await askPlan(w));
    await until('the hop to flip two uploads', async () => flip.flipped.patches >= 2);
    hop().use(null);
    const runs = await everyDetailArrives(w, 'ship-1', 3);
    expect(runs.map((r) => r.detailState)).toEqual(['arrived', 'arrived', 'arrived']);
    await settled(w);
    expect(
      await w.relayMetric('driftline_relay_refusals_total', { reason: 'checksum-mismatch', peer: 'ship-1' }),
    ).toBe(2);
  });

  it('eaten control: a request is never done by a later run, is unconfirmed and sent again, and is done once the path is honest', async () => {
    const w = world as World;
    const eat = eatV2Control();
    hop().use(eat);
    const id = await askPlan(w);
    await until('the hop to eat the request', async () => eat.eaten > 0);
    // a run the request did not cause: the agent restarts and plans at start (the same plan: it confirms)
    const before = (await cellTimes(w)).plannedAt;
    await w.stopProgram('ship-1');
    w.start('ship-1');
    await until('the restart plan at the hub', async () => (await cellTimes(w)).plannedAt > before);
    expect(await planRequest(w, id)).toMatchObject({ state: 'pending', deliveredAt: null, runId: null });
    await until(
      'the request to show unconfirmed',
      async () => (await planRequest(w, id)).unconfirmed === true,
    );
    await w.logged('hub', /sent a plan request again/);
    await until('the hop to eat the resend too', async () => eat.eaten > 1);
    expect((await planRequest(w, id)).state).toBe('pending');
    hop().use(null);
    const done = await planDone(w, id, 240_000);
    expect(done.deliveredAt).not.toBeNull();
    expect(done.runId).toMatch(/^[0-9A-Z]{26}$/);
  });

  it('pushes held 15 s: the plan is dated when it ran, not when it arrived', async () => {
    const w = world as World;
    const hold = holdV2Pushes(15_000);
    hop().use(hold);
    const askedAt = Date.now();
    await planDone(w, await askPlan(w));
    hop().use(null);
    expect(hold.held).toBeGreaterThan(0);
    const p = await cellTimes(w);
    const u = (await agentAtHub(w)).clockOffsetUncertaintyMs ?? 0;
    expect(p.receivedAt - p.plannedAt).toBeGreaterThanOrEqual(15_000 - u);
    expect(p.plannedAt).toBeGreaterThanOrEqual(askedAt - u);
    expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
  });

  it('an altered heartbeat is refused by its signature at relay-1; the round arrives as its change after', async () => {
    const w = world as World;
    const flip = flippedHeartbeats(1);
    hop().use(flip);
    // quiet rounds (decision 500): the same clean plan every 10 s; the first goes as its change, whose ack
    // says the hub rebuilds heartbeats, and the next as a heartbeat
    nextPlans(w, 'ship-1', 'clean');
    const refusedBefore = await w.relayMetric('driftline_hop_requests_total', {
      route: '/v2',
      status: '403',
    });
    const schedule = (every: string) => (c: Record<string, unknown>) => {
      for (const component of c.components as Array<{ schedule: string }>) component.schedule = every;
    };
    // every 10 s, not 3: a round whose plans outlast the cadence never ends, and its quiet results wait
    // for it up to the ledger's 10 minutes (decision 370); on a loaded machine a plan took 4.5 s
    await reconfigureAgent(w, 'ship-1', schedule('*/10 * * * * *'));
    w.start('ship-1');
    // the agent's restart, its first round's change and that ack first: 90 s was short in a slow whole run
    await until('the hop to alter a heartbeat', async () => flip.flipped >= 1, 180_000);
    const at = Date.now();
    await until('a later quiet round at the hub', async () => (await cellTimes(w)).plannedAt > at);
    hop().use(null);
    await reconfigureAgent(w, 'ship-1', schedule('0 0 1 1 *'));
    w.start('ship-1');
    expect(
      await w.relayMetric('driftline_hop_requests_total', { route: '/v2', status: '403' }),
    ).toBeGreaterThan(refusedBefore);
    expect(await w.hubMetric('hub_bundles_refused_total', { reason: 'bad-signature' })).toBe(0);
    const rejected = await w.logged('ship-1', /upstream rejected a bundle/);
    expect(rejected.map((l) => l.code)).toContain('bad-signature');
    await settled(w);
  });

  it('replayed pushes and held pulls, once the agent is gone, move nothing the hub shows', async () => {
    const w = world as World;
    const capture = captureV2();
    hop().use(capture);
    nextPlans(w, 'ship-1', { changes: 'a third run' });
    await planDone(w, await askPlan(w));
    await settled(w);
    hop().use(null);
    await w.stopProgram('ship-1');
    const seen = await agentAtHub(w);
    const runs = await runCount(w);
    expect(capture.sent.filter((s) => s.kind === 'push').length).toBeGreaterThan(0);
    expect(capture.sent.filter((s) => s.kind === 'pull').length).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1500));
    const statuses = { push: [] as number[], pull: [] as number[] };
    for (const { kind, req } of capture.sent) {
      const r = await w.fetch(`${w.relayUrl}${req.path}`, { method: 'POST', body: new Uint8Array(req.body) });
      await r.arrayBuffer();
      (kind === 'push' ? statuses.push : statuses.pull).push(r.status);
    }
    // a pull is acted on once (relay-1's sequence window, decision 490); a push is idempotent (D2)
    // (compared as lists, so a failure prints every status the replay met)
    expect(statuses.pull).toEqual(statuses.pull.map(() => 409));
    expect(statuses.push).toEqual(statuses.push.map(() => 200));
    // give relay-1 time to forward anything it took (it forwards within its idle time)
    await new Promise((r) => setTimeout(r, 3000));
    const after = await agentAtHub(w);
    expect(after.siteContactAt).toBe(seen.siteContactAt);
    expect(after.lastContactAt).toBe(seen.lastContactAt);
    expect(await runCount(w)).toBe(runs);
  });
});
