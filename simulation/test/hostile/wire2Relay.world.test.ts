import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { decodeBatch, encodeBatch, type Receipt, wire2 } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { runProgram } from '../../src/topology/programs.js';
import { alteredDownlink, fakeReceipts, flippedBytes } from '../../src/world/hostile/attacks.js';
import { capturePosts } from '../../src/world/hostile/clockAttacks.js';
import { borrowedFrom } from '../../src/world/hostile/wire2Attacks.js';
import { claimClocks, swapV2Pushes } from '../../src/world/hostile/wire2RelayAttacks.js';
import { until } from '../support.js';
import { agentAtHub, askPlan, cellTimes, nextPlans, planDone } from './plans.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, type World } from './world.js';

/**
 * Two sites' agents on hop v2 (docs/decisions/495-hop-v2-on-the-agent-link.md) behind relay-1, whose
 * upstreams are a hostile hop (first) and the hub (second); a hop sits between the agents and relay-1
 * too. relay-1 carries the agents' pushes verbatim inside its v1 batches: what a lying relay does to them
 * there (alters the downlink, claims clocks, flips bytes, fakes the hub's receipts, replays, posts one
 * site's push as another's) is refused at the hub or healed; then two agent-side attacks only v2 has a
 * form for (pushes swapped between agents, a push under another agent's short id) and a revocation
 * while v2 pulls are held (`revokeHeldPull`). Every program runs on one machine: clocks agree.
 */

let world: World | undefined;
afterAll(() => world?.stop());
const SITES = ['ship-1', 'ship-2'];
const LIE_MS = 20 * 60_000;

const upstreamHop = () => {
  const p = (world as World).upstreamSide[0];
  if (!p) throw new Error('relay-1 has no hostile upstream');
  return p;
};

const settled = (w: World, site: string) =>
  until(
    `${site}'s agent to hold nothing unacknowledged`,
    async () => {
      const s = await w.agentStatus(site);
      return s.unackedRuns === 0 && s.blobsAwaitingReceipt === 0 && s.blobsPending === 0 ? s : false;
    },
    120_000,
  );

describe('a lying relay between relay-1 and the hub, agents on hop v2', () => {
  it('altered downlink copies on one upstream: the genuine ones come through the other, the altered are refused', async () => {
    const altered = alteredDownlink();
    world = await startVirtualWorld({
      sites: SITES,
      agentsVia: 'proxy',
      relayUpstreams: ['proxy', 'hub'],
      agentSync: { wire: 2, rejectedRetryS: 2 },
      attacks: { upstreamSide: [altered] },
    });
    const w = world;
    await everyDetailArrives(w, 'ship-1');
    const done = await planDone(w, await askPlan(w));
    expect(done.runId).toMatch(/^[0-9A-Z]{26}$/);
    await settled(w, 'ship-1');
    expect(altered.altered).toBeGreaterThanOrEqual(2);
    // A conflict is counted when a second, different copy arrives under an id relay-1 took already: the
    // plan request's control bundle, which stays on the hub's downlink until both lanes took it. Not
    // every ack: a v2 ack's id comes from its signature (an altered copy is another item, which the
    // agent refuses), and the hub replaces a document's ack with the next, often before the other lane
    // pulls it (one or two acks counted, by the pace of the lanes).
    await until(
      'relay-1 to count the plan request’s two copies as a downlink conflict',
      async () => (await w.relayMetric('driftline_relay_downlink_conflicts_total', { site: 'ship-1' })) >= 1,
    );
    await w.logged('relay-1', /downlink copy differs/);
    const refused = await w.logged('ship-1', /not signed by the pinned hub key/);
    expect(refused.every((l) => l.upstream === w.agentSide?.url)).toBe(true);
    upstreamHop().use(null);
  });

  it('an unkeyed relay claiming the agents’ clocks 20 minutes ahead moves no plannedAt', async () => {
    const w = world as World;
    const claim = claimClocks(
      LIE_MS,
      SITES.map((s) => `${s}/a1`),
    );
    upstreamHop().use(claim);
    const askedAt = Date.now();
    await planDone(w, await askPlan(w));
    upstreamHop().use(null);
    expect(claim.claimed).toBeGreaterThan(0);
    const p = await cellTimes(w);
    const a = await agentAtHub(w);
    expect(p.plannedAt).toBeGreaterThanOrEqual(askedAt - (a.clockOffsetUncertaintyMs ?? 0));
    expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
    if (a.clockOffsetUncertaintyMs === null) expect(a.clockOffsetMs ?? 0).toBeLessThanOrEqual(0);
    else expect(Math.abs(a.clockOffsetMs ?? 0)).toBeLessThanOrEqual(a.clockOffsetUncertaintyMs);
    expect(Math.abs(a.clockOffsetMs ?? 0)).toBeLessThan(LIE_MS / 2);
    // the claim was read, as for a v1 bundle, and held back: the request the agent confirmed bounds its clock
    expect(a.clockHeld).toMatchObject({ reason: 'contradicts-bounds', via: 'relay-1' });
    expect(Math.abs((a.clockHeld?.offsetMs ?? 0) - LIE_MS)).toBeLessThanOrEqual(1000);
    expect(
      await w.hubMetric('hub_clock_estimates_held_total', { reason: 'contradicts-bounds' }),
    ).toBeGreaterThan(0);
    const [line] = await w.logged('hub', /refused a clock estimate/);
    expect(line).toMatchObject({
      site: 'ship-1',
      agent: 'a1',
      peer: 'relay-1',
      reason: 'contradicts-bounds',
    });
  });

  it('v2 pushes flipped inside relay-1’s batches are refused at the hub by their signature, and go up again', async () => {
    const w = world as World;
    const flip = flippedBytes({ bundles: 2, patches: 0 });
    upstreamHop().use(flip);
    nextPlans(w, 'ship-1', { changes: 'flipped on the way' });
    await planDone(w, await askPlan(w));
    await until('the hop to flip two pushes', async () => flip.flipped.bundles >= 2);
    upstreamHop().use(null);
    expect(await w.hubMetric('hub_bundles_refused_total', { reason: 'bad-signature' })).toBe(2);
    const codes = () =>
      w
        .logLines('relay-1', /upstream refused bundles for good/)
        .flatMap((l) => (l.receipts as Array<{ code: string }>).map((r) => r.code));
    await until('relay-1 to log both refusals', async () => codes().length >= 2);
    expect(codes()).toEqual(['bad-signature', 'bad-signature']);
    for (const site of SITES) {
      expect((await everyDetailArrives(w, site)).length).toBeGreaterThan(0);
      await settled(w, site);
    }
  });

  it('receipts faked by the hop (the pushes dropped) heal once it is honest; replayed batches are duplicates; a peer of one site cannot post another’s push', async () => {
    const w = world as World;
    const fake = fakeReceipts('hub');
    upstreamHop().use(fake);
    for (const site of SITES) nextPlans(w, site, { changes: `dropped at ${site}` });
    const asked = await Promise.all(SITES.map((s) => askPlan(w, s)));
    await until('the hop to fake a receipt', async () => fake.faked > 0);
    const capture = capturePosts();
    upstreamHop().use(capture);
    for (const id of asked) await planDone(w, id);
    for (const site of SITES) await settled(w, site);

    // relay-1's batches posted again (its token, its heads): every push in them is a duplicate
    const pushes: Uint8Array[] = [];
    for (const p of capture.posts) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(p.headers))
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
      const r = await w.fetch(`${w.hubUrl}${p.path}`, {
        method: 'POST',
        headers,
        body: new Uint8Array(p.body),
      });
      const receipts = ((await r.json()) as { receipts: Receipt[] }).receipts;
      expect(receipts.map((x) => x.status).every((s) => s === 'duplicate')).toBe(true);
      const batch = decodeBatch(
        new Uint8Array(p.headers['content-encoding'] === 'br' ? brotliDecompressSync(p.body) : p.body),
      );
      if (batch.ok) pushes.push(...batch.value.filter((b) => wire2.isWire2Message(b)));
    }
    expect(pushes.length).toBeGreaterThan(0);

    // a peer that acts for ship-1 only posts both sites' pushes: ship-2's are refused, none is stored
    const args = ['peer', '--config', join(w.dir, 'hub.yaml'), '--name', 'ship-1-only', '--sites', 'ship-1'];
    const token = (JSON.parse(await runProgram('hub', [...args, '--no-key', '--json'])) as { token: string })
      .token;
    const outcomes: string[] = [];
    for (const push of pushes) {
      const r = await w.fetch(`${w.hubUrl}/v1/bundles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.driftline.batch' },
        body: Buffer.from(encodeBatch([push])),
      });
      const [receipt] = ((await r.json()) as { receipts: Receipt[] }).receipts;
      outcomes.push(
        receipt?.status === 'rejected' ? `${receipt.code}: ${receipt.message}` : `${receipt?.status}`,
      );
    }
    const foreign = outcomes.filter((o) => o !== 'duplicate');
    expect(foreign.length).toBeGreaterThan(0);
    expect(outcomes.length - foreign.length).toBeGreaterThan(0);
    for (const o of foreign) expect(o).toMatch(/^forbidden: .*does not act for site 'ship-2'/);
    expect(await w.hubMetric('hub_bundles_refused_total', { reason: 'agent-mismatch' })).toBe(foreign.length);
  });
});

describe('a hop between the agents on hop v2 and relay-1', () => {
  it('pushes swapped between agents: each is its own agent’s, nothing is lost or misdated', async () => {
    const w = world as World;
    const swap = swapV2Pushes();
    w.agentSide?.use(swap);
    for (const site of SITES) nextPlans(w, site, { changes: `swapped at ${site}` });
    await Promise.all(SITES.map(async (s) => planDone(w, await askPlan(w, s))));
    await until('the hop to swap a push', async () => swap.swapped > 0);
    w.agentSide?.use(null);
    for (const site of SITES) {
      await settled(w, site);
      expect((await everyDetailArrives(w, site)).length).toBeGreaterThan(0);
      const p = await cellTimes(w, site);
      expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
      expect((await agentAtHub(w, site)).agent).toBe('a1');
    }
  });

  it('a push sent under another agent’s short id is refused by relay-1 (its signature), never reaching the hub', async () => {
    const w = world as World;
    const borrow = borrowedFrom();
    const refused = () => w.relayMetric('driftline_hop_requests_total', { route: '/v2', status: '403' });
    const [before, hubBefore] = [
      await refused(),
      await w.hubMetric('hub_bundles_refused_total', { reason: 'bad-signature' }),
    ];
    w.agentSide?.use(borrow);
    for (const site of SITES) nextPlans(w, site, { changes: `borrowed at ${site}` });
    const asked = await Promise.all(SITES.map((s) => askPlan(w, s)));
    await until('the hop to send a push under another id', async () => borrow.borrowed > 0);
    w.agentSide?.use(null);
    for (const id of asked) await planDone(w, id);
    expect(await refused()).toBeGreaterThan(before);
    expect(await w.hubMetric('hub_bundles_refused_total', { reason: 'bad-signature' })).toBe(hubBefore);
    for (const site of SITES) await settled(w, site);
  });

  it('relay token revoke closes the agent’s held v2 pulls, and a request queued after never reaches it', async () => {
    const w = world as World;
    await until(
      'the agents to hold pulls open at relay-1',
      async () => (await w.relayMetric('driftline_hop_held_requests_open')) >= 1,
    );
    const REFUSED = /downlink pull failed|no upstream reachable|refused by/;
    const failures = () => w.logLines('ship-1', REFUSED).length;
    await runProgram('relay', ['token', 'revoke', 'ship-1', '--config', join(w.dir, 'relay-1.yaml')]);
    const sentToRelay = await w.hubMetric('driftline_hop_bytes_out_total', { peer: 'relay-1' });
    const id = await askPlan(w);
    await until(
      'relay-1 to close the revoked held pulls',
      async () => (await w.relayMetric('driftline_hop_revoked_requests_closed_total')) >= 1,
    );
    // the request went down to relay-1 ...
    await until(
      'relay-1 to take the plan request from the hub',
      async () => (await w.hubMetric('driftline_hop_bytes_out_total', { peer: 'relay-1' })) > sentToRelay,
    );
    // ... and the agent kept trying (refused each time) well after it got there, and never received it
    const failed = failures();
    await until('the agent to be refused three more times', async () => failures() >= failed + 3, 120_000);
    expect(JSON.stringify(w.logLines('ship-1', REFUSED).slice(-3))).toMatch(/unauthorized|401/);
    expect(w.logLines('ship-1', /plan request received/).filter((l) => l.requestId === id)).toEqual([]);
  });
});
