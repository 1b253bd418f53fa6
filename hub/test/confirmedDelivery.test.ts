import { asSiteId } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { CONFIRM_WINDOWS, PlanRequests } from '../src/core/PlanRequests.js';
import { toPlanRequest } from '../src/core/views.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { AgentSim } from './agentSim.js';
import { type Harness, makeHarness } from './harness.js';

/**
 * Delivery confirmed by the agent, not inferred (decision 230): a plan request is `delivered` when the
 * agent's signed document says it arrived, and `done` only by a run the agent started after that.
 */
describe('plan requests the agent confirms', () => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });

  async function setUp(confirms: boolean) {
    const h = await makeHarness('sqlite');
    open.push(h);
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    await h.enrol(a);
    if (confirms) a.received(null);
    const firstRun = a.plan('prod', 'net', 'clean');
    await h.ingest.accept('relay-1', [await a.delta()]);
    const requests = new PlanRequests({
      store: h.store,
      clock: h.clock,
      ids: ulidGen(h.clock),
      hubPrivateKey: h.hubKeys.privateKey,
      ttlS: 86_400,
    });
    h.clock.advance(60_000);
    const r = await requests.create({ site: asSiteId('ship-7'), environment: 'prod', component: 'net' });
    if (!r.ok) throw new Error(r.message);
    const state = async () => h.store.getPlanRequest(r.request.requestId);
    return { h, a, requestId: r.request.requestId, state, requests, firstRun };
  }

  it('is not done by a later scheduled run when the agent never received it (a relay ate it)', async () => {
    const { h, a, state } = await setUp(true);
    h.clock.advance(120_000);
    a.plan('prod', 'net', 'drift'); // the cell's schedule, not the request
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({ state: 'pending', runId: null, deliveredAt: null });
  });

  it('is delivered at the time the agent says, and done by the run it started after that', async () => {
    const { h, a, requestId, state } = await setUp(true);
    h.clock.advance(30_000);
    const receivedAt = h.clock.now();
    a.received(requestId);
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({
      state: 'delivered',
      deliveredAt: receivedAt,
      agentReceivedAt: receivedAt,
    });
    h.clock.advance(5_000);
    const runId = a.plan('prod', 'net', 'drift');
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({ state: 'done', runId, deliveredAt: receivedAt });
  });

  it('is not done by a run the agent started before it received the request', async () => {
    const { h, a, requestId, state } = await setUp(true);
    h.clock.advance(30_000);
    // A scheduled run starts (startedAt is 1 s before it finishes), the request arrives while it runs.
    h.clock.advance(500);
    a.received(requestId);
    h.clock.advance(500);
    a.plan('prod', 'net', 'drift');
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({ state: 'delivered', runId: null });
  });

  it('is not done by a plan already under way when it arrived that found the same plan (a cell confirmation)', async () => {
    const { h, a, requestId, state } = await setUp(true);
    h.clock.advance(30_000);
    // A scheduled plan starts, the request arrives while it runs, and the plan finds what the cell holds.
    h.clock.advance(500);
    a.received(requestId);
    h.clock.advance(500);
    a.confirm('prod', 'net');
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({ state: 'delivered', runId: null });
  });

  it('is done by the run the agent stamps with the request id, also when that plan came out the same', async () => {
    const { h, a, requestId, state, firstRun } = await setUp(true);
    h.clock.advance(30_000);
    a.received(requestId);
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({ state: 'delivered', runId: null });
    h.clock.advance(2_000);
    a.confirm('prod', 'net');
    a.answered(requestId, firstRun);
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({
      state: 'done',
      runId: firstRun,
      agentReceivedAt: h.clock.now() - 2_000,
    });
  });

  it('takes delivery and done in one batch when the receipt and the run travel together', async () => {
    const { h, a, requestId, state } = await setUp(true);
    h.clock.advance(30_000);
    a.received(requestId);
    h.clock.advance(2_000);
    const runId = a.plan('prod', 'net', 'drift');
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({ state: 'done', runId, agentReceivedAt: h.clock.now() - 2_000 });
  });

  it('keeps the old rule for an agent whose document lists no requests (an older agent)', async () => {
    const { h, a, state } = await setUp(false);
    h.clock.advance(120_000);
    const runId = a.plan('prod', 'net', 'drift');
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect(await state()).toMatchObject({ state: 'done', runId });
  });

  it('is unconfirmed and sent again past N contact intervals without the agent’s word, and not after it', async () => {
    const { h, a, requestId, state, requests } = await setUp(true);
    const row = await state();
    // The agent declares a 600 s contact interval: 3 of them to confirm.
    expect(row?.confirmBy).toBe((row?.requestedAt ?? 0) + CONFIRM_WINDOWS * 600_000);
    const downlink = async () =>
      (await h.store.readDownlink('ship-7', 0, 100)).filter((d) => d.requestId === requestId).length;
    expect(await downlink()).toBe(1);
    h.clock.advance(CONFIRM_WINDOWS * 600_000 - 1);
    expect(await requests.resendUnconfirmed()).toEqual([]);
    expect(toPlanRequest((await state())!, h.clock.now()).unconfirmed).toBe(false);
    h.clock.advance(1);
    expect((await requests.resendUnconfirmed()).map((r) => r.requestId)).toEqual([requestId]);
    expect(await downlink()).toBe(2);
    expect(toPlanRequest((await state())!, h.clock.now())).toMatchObject({
      state: 'pending',
      unconfirmed: true,
    });
    // Not again before another window, then again.
    expect(await requests.resendUnconfirmed()).toEqual([]);
    h.clock.advance(CONFIRM_WINDOWS * 600_000);
    expect(await requests.resendUnconfirmed()).toHaveLength(1);
    expect(await downlink()).toBe(3);
    // The agent's word ends it.
    a.received(requestId);
    await h.ingest.accept('relay-1', [await a.delta()]);
    h.clock.advance(CONFIRM_WINDOWS * 600_000);
    expect(await requests.resendUnconfirmed()).toEqual([]);
    expect(toPlanRequest((await state())!, h.clock.now())).toMatchObject({
      state: 'delivered',
      unconfirmed: false,
    });
  });

  it('sets no confirmBy for an older agent, and never sends its requests again', async () => {
    const { h, state, requests } = await setUp(false);
    expect((await state())?.confirmBy).toBeUndefined();
    h.clock.advance(86_000_000);
    expect(await requests.resendUnconfirmed()).toEqual([]);
  });
});
