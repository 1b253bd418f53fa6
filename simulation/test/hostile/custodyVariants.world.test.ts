import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeReceipts } from '../../src/world/hostile/attacks.js';
import { HOP_BY_HOP, type HopRequest } from '../../src/world/hostile/hostileHandler.js';
import { acksOnly, custodyThenDrip, fakeCustody, silentHop } from '../../src/world/hostile/wire2Attacks.js';
import { until } from '../support.js';
import { addHubUpstream, askPlan, cellTimes, nextPlans, planDone, planRequest, runCount } from './plans.js';
import { startVirtualWorld } from './virtualWorld.js';
import { everyDetailArrives, type World } from './world.js';

/**
 * Issue 59's other variants of a hop that sits on results (silentCustody.world.test.ts has silent custody
 * and an honest relay whose upstream is silent): custody then drip, custody then loss of the blob folder,
 * and a relay that forwards only acks; hop v1 and v2, with an honest path (the hub itself) as the agent's
 * second upstream (docs/decisions/575-custody-deadline-per-path.md).
 *
 * The bound. An upstream's custody deadline is 1.5 × its path's longest recent delivery + a minute, never
 * under a minute (`custody.ts`): the agent cannot tell a sitter from a slow honest path sooner. Here the
 * honest path delivers in seconds, so the deadline is the minute floor (the `custodyDeadlineS` of 30 is
 * raised to it) and a result that waits for it and then goes the honest way arrives under
 * `BOUND_S` = 90 s = 1.5 × that deadline: the deadline plus one honest trip, as the silent-custody tests
 * assert, and well under 2 × the delivery an honest path is allowed (the deadline). Copies: the agent
 * may send a result once more per deadline it waited, so over a hold under 2 deadlines at most 1 + 1.
 */
const DEADLINE_S = 30;
const BOUND_S = DEADLINE_S * 3;

let world: World | undefined;
let stops: Array<() => void> = [];
afterEach(async () => {
  for (const s of stops) s();
  stops = [];
  await world?.stop();
  world = undefined;
});

const sync = (wire: 1 | 2) => ({
  wire,
  resendAfterS: 86_400,
  custodyDeadlineS: DEADLINE_S,
  contactIntervalS: 5,
});

async function startUpRun(w: World) {
  await until('the start-up run at the hub', async () => (await runCount(w)) > 0);
}

/**
 * The pushes the agent sent at or after `since` (its own record, the `pushes` table), by upstream, and
 * how many of them were copies: a push of heads it had pushed before carries nothing new (what it carries
 * went before: a resend after a deadline, or one after an ack that set the acked heads back).
 */
function pushesSince(w: World, since: number, site = 'ship-1') {
  const db = new Database(join(w.dir, site, 'data', 'agent.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare('SELECT created_at, upstream, heads FROM pushes ORDER BY created_at')
      .all() as Array<{
      created_at: number;
      upstream: string | null;
      heads: string;
    }>;
    const seen = new Set<string>();
    const byUpstream: Record<string, number> = {};
    let copies = 0;
    for (const r of rows) {
      if (r.created_at >= since) {
        const u = r.upstream ?? '(none)';
        byUpstream[u] = (byUpstream[u] ?? 0) + 1;
        if (seen.has(r.heads)) copies++;
      }
      seen.add(r.heads);
    }
    return { byUpstream, copies };
  } finally {
    db.close();
  }
}

/** Sends a kept request on to `target` through the world's network (a hop's own connection). */
const sendTo =
  (w: World, target: string) =>
  async (req: HopRequest): Promise<number> => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && !k.startsWith(':') && !HOP_BY_HOP.has(k))
        headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const r = await w.fetch(`${target}${req.path}`, {
      method: req.method,
      headers,
      body: new Uint8Array(req.body),
    });
    await r.arrayBuffer();
    return r.status;
  };

/** The resend the agent logged (which upstream sat, by which it went, the deadline it applied). */
async function resendLogged(w: World) {
  const lines = await w.logged('ship-1', /took custody .* and the hub has not acknowledged it/);
  return lines[0] as { upstream: string; via: string; deadlineS: number; heldS: number };
}

/**
 * The extra copies the agent sent since `since` (`pushesSince`): at least the resend after the deadline,
 * at most one per deadline elapsed. The resends it logged are the sitter's `resends` in `edge-agent status`.
 */
async function expectOneCopyPerDeadline(w: World, since: number, sitter: string) {
  const resends = w.logLines('ship-1', /took custody .* and the hub has not acknowledged it/);
  const deadlineS = Number(resends[0]?.deadlineS);
  const elapsedS = (Date.now() - since) / 1000;
  const pushes = pushesSince(w, since);
  expect(resends.length).toBeGreaterThanOrEqual(1);
  expect(pushes.copies).toBeGreaterThanOrEqual(resends.length);
  expect(pushes.copies).toBeLessThanOrEqual(Math.max(1, Math.floor(elapsedS / deadlineS)));
  const status = await w.agentStatus('ship-1');
  expect(status.custodyOverdue).toEqual([
    expect.objectContaining({ upstream: sitter, resends: resends.length }),
  ]);
  return { resends: resends.length, copies: pushes.copies, elapsedS, deadlineS, pushes: pushes.byUpstream };
}

describe('hostile relay: the other ways to sit on results (issue 59)', () => {
  for (const wire of [1, 2] as const)
    it(`custody then drip: the result goes the honest way by the deadline, the late copy changes nothing (hop v${wire})`, async () => {
      world = await startVirtualWorld({ agentsVia: 'proxy', agentSync: sync(wire) });
      const w = world;
      const proxy = w.agentSide;
      if (!proxy) throw new Error('the world has no agent-side proxy');
      await startUpRun(w);
      await addHubUpstream(w);
      // one kept push goes on to relay-1 every 150 s: 2.5 deadlines apart
      const DRIP_MS = 150_000;
      const sent: number[] = [];
      const drip = custodyThenDrip(wire === 1 ? fakeReceipts() : fakeCustody(), DRIP_MS, async (req) => {
        sent.push(await sendTo(w, w.relayUrl)(req));
      });
      stops.push(() => drip.stop());
      proxy.use(drip);
      w.start('ship-1');

      nextPlans(w, 'ship-1', { changes: 'dripped change' });
      const asked = Date.now();
      const id = await askPlan(w);
      const done = await planDone(w, id, 200_000);
      const heldS = (Date.now() - asked) / 1000;
      const said = await resendLogged(w);
      const copies = await expectOneCopyPerDeadline(w, asked, proxy.url);
      expect(drip.taken).toBeGreaterThan(0);
      expect(drip.dripped).toBe(0); // it arrived before the hop let anything go
      expect(said).toMatchObject({ upstream: proxy.url, via: w.hubUrl });
      expect(heldS).toBeGreaterThanOrEqual(DEADLINE_S);
      expect(heldS).toBeLessThan(BOUND_S);
      console.log(`drip v${wire}: held ${heldS} s`, copies);
      expect(copies.pushes[proxy.url]).toBe(drip.taken); // each push the hop took: none went there twice

      // What the hub shows now; then every kept push goes on (the sitter is passed over: no more come).
      const runs = await runCount(w);
      const cell = await cellTimes(w);
      const merged = await w.hubMetric('hub_runs_merged_total');
      const taken = drip.taken;
      const forwarded = await w.relayMetric('driftline_relay_forwards_total', { result: 'ok' });
      await until(
        'the hop to let every kept push go',
        async () => drip.dripped >= taken,
        DRIP_MS * (taken + 1),
      );
      await until('relay-1 to answer the dripped pushes', async () => sent.length >= taken);
      console.log(`drip v${wire}: relay-1 answered the late copies`, sent);
      // relay-1 took the late copies and passed them to the hub, which had them already
      await until(
        'relay-1 to pass the late copies on',
        async () => (await w.relayMetric('driftline_relay_forwards_total', { result: 'ok' })) > forwarded,
      );
      await new Promise((r) => setTimeout(r, 10_000));
      expect(drip.taken).toBe(taken);
      expect(await runCount(w)).toBe(runs);
      expect(await cellTimes(w)).toEqual(cell);
      expect(await w.hubMetric('hub_runs_merged_total')).toBe(merged);
      expect((await planRequest(w, id)).runId).toBe(done.runId);
      expect(sent.every((status) => status >= 200 && status < 300)).toBe(true);
      // the late copies made the agent send nothing again: still the one copy of the resend
      const end = await expectOneCopyPerDeadline(w, asked, proxy.url);
      console.log(`drip v${wire}: at the end`, end);
      expect(end.copies).toBe(copies.copies);
    });

  for (const wire of [1, 2] as const)
    it(`custody then loss of the blob folder: the result and its detail go by the hub once the deadline passes (hop v${wire})`, async () => {
      world = await startVirtualWorld({ relayUpstreams: ['proxy'], agentSync: sync(wire) });
      const w = world;
      const above = w.upstreamSide[0];
      if (!above) throw new Error('relay-1 has no upstream proxy');
      await startUpRun(w);
      await everyDetailArrives(w, 'ship-1', 1);
      await addHubUpstream(w, 'ship-1', w.relayUrl);
      // relay-1 takes custody honestly (results and the detail blob); nothing it sends upstream is answered
      const dead = silentHop();
      above.use(dead);
      w.start('ship-1');
      const blobs = join(w.relayDataDir, 'blobs');
      const before = new Set(existsSync(blobs) ? readdirSync(blobs) : []);

      nextPlans(w, 'ship-1', { changes: 'held at relay-1, then its blobs lost' });
      const asked = Date.now();
      const id = await askPlan(w);
      await until(
        'relay-1 to hold the new detail blob',
        async () => existsSync(blobs) && readdirSync(blobs).some((f) => !before.has(f)),
      );
      await until('the agent to wait for a hub receipt of it', async () => {
        const s = await w.agentStatus('ship-1');
        return (s.blobsAwaitingReceipt as number) >= 1;
      });
      rmSync(blobs, { recursive: true, force: true });
      const done = await planDone(w, id, 200_000);
      const heldS = (Date.now() - asked) / 1000;
      const detail = await everyDetailArrives(w, 'ship-1', 2).catch((e: Error) => e);
      const detailS = (Date.now() - asked) / 1000;
      const said = await resendLogged(w);
      const copies = await expectOneCopyPerDeadline(w, asked, w.relayUrl);
      const reuploads = w.logLines('ship-1', /detail blob uploaded again/);
      console.log(`blob loss v${wire}: held ${heldS} s, detail ${detailS} s`, copies, {
        reuploads: reuploads.map((l) => l.upstream),
        relayForwards: dead.pushes,
      });
      expect(done.runId).not.toBeNull();
      expect(dead.pushes).toBeGreaterThan(0);
      expect(said).toMatchObject({ upstream: w.relayUrl, via: w.hubUrl });
      expect(heldS).toBeGreaterThanOrEqual(DEADLINE_S);
      expect(heldS).toBeLessThan(BOUND_S);
      if (detail instanceof Error) throw detail;
      expect(detail.map((r) => r.detailState)).toEqual(['arrived', 'arrived']);
      expect(detailS).toBeLessThan(BOUND_S);
      // the detail went once more (to the hub, relay-1 having sat on it): one extra copy in the deadline
      expect(reuploads).toEqual([expect.objectContaining({ upstream: w.relayUrl })]);
    });

  for (const wire of [1, 2] as const)
    it(`a relay that forwards only acks: the result goes the honest way by the deadline (hop v${wire})`, async () => {
      world = await startVirtualWorld({ agentsVia: 'proxy', agentSync: sync(wire) });
      const w = world;
      const proxy = w.agentSide;
      if (!proxy) throw new Error('the world has no agent-side proxy');
      await startUpRun(w);
      await addHubUpstream(w);
      w.start('ship-1');
      // The hop is honest at first: a result goes through it to the hub, and its ack comes back the same way.
      nextPlans(w, 'ship-1', { changes: 'forwarded honestly' });
      const askedA = Date.now();
      await planDone(w, await askPlan(w), 60_000);
      const honestS = (Date.now() - askedA) / 1000;
      expect(Object.keys(pushesSince(w, askedA).byUpstream)).toEqual([proxy.url]);

      // Then it passes pulls up and acks down, and takes custody of every push, forwarding none.
      const hop = acksOnly(wire === 1 ? fakeReceipts() : fakeCustody());
      proxy.use(hop);
      nextPlans(w, 'ship-1', { changes: 'sat on' });
      const asked = Date.now();
      const done = await planDone(w, await askPlan(w), 200_000);
      const heldS = (Date.now() - asked) / 1000;
      const said = await resendLogged(w);
      const copies = await expectOneCopyPerDeadline(w, asked, proxy.url);
      console.log(
        `acks only v${wire}: honest ${honestS} s, held ${heldS} s, acks down ${hop.acks} of ${hop.pulls} pulls`,
        copies,
      );
      expect(done.runId).not.toBeNull();
      expect(hop.pulls).toBeGreaterThan(0);
      expect(said).toMatchObject({ upstream: proxy.url, via: w.hubUrl });
      expect(heldS).toBeGreaterThanOrEqual(DEADLINE_S);
      expect(heldS).toBeLessThan(BOUND_S);
      expect(hop.acks).toBeGreaterThan(0); // the hub's acks did come down through it
    });
});
