import { BATCH_CONTENT_TYPE, encodeBatch, type HubEvent, PlanRequestSchema } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { PLAN, postJson, startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';
import { v2Push, wire2Hub } from './wire2Fixture.js';

/**
 * Every state a person waits on (docs/decisions/560-plan-request-states.md): a plan request is asked →
 * at the relay (a relay pulled it from the hub's downlink) → delivered (the agent's word) → running (the
 * agent's word that it started the plan) → done, each with its time, and each step is a live event.
 */
let h: TestHub | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function asked(hub: TestHub) {
  const admin = { authorization: (await addTestUser(hub.hub.store, 'test-admin', ['admin'])).authorization };
  const events: HubEvent[] = [];
  hub.hub.events.subscribe((e) => events.push(e.event));
  const res = await postJson(`${hub.url}/api/plan-requests`, PLAN, admin);
  expect(res.status).toBe(201);
  const created = PlanRequestSchema.parse(await res.json());
  const read = async () =>
    PlanRequestSchema.parse(
      await (await fetch(`${hub.url}/api/plan-requests/${created.requestId}`, { headers: admin })).json(),
    );
  const updates = () =>
    events.flatMap((e) =>
      e.type === 'plan-request-updated' && e.request.requestId === created.requestId ? [e.request] : [],
    );
  return { requestId: created.requestId, read, updates };
}

const pushV1 = async (hub: TestHub) => {
  const res = await fetch(`${hub.hopUrl}/v1/bundles`, {
    method: 'POST',
    headers: { ...hub.relay, 'content-type': BATCH_CONTENT_TYPE },
    body: encodeBatch([await hub.agent.delta()]) as Uint8Array<ArrayBuffer>,
  });
  expect(res.status).toBe(200);
};

const iso = (ms: number) => new Date(ms).toISOString();

describe('a plan request’s journey', () => {
  it('goes asked → at the relay → delivered → running → done, each step with its time and a live event', async () => {
    h = await startHub();
    const hub = h;
    hub.agent.received(null); // an agent that confirms what it receives (decision 230)
    await pushV1(hub);
    const { requestId, read, updates } = await asked(hub);
    expect(await read()).toMatchObject({ state: 'pending', relayAt: null, startedAt: null });

    hub.clock.advance(1_000);
    const pulledAt = hub.clock.now();
    const dl = await fetch(`${hub.hopUrl}/v1/bundles?for=ship-7`, { headers: hub.relay });
    expect(dl.status).toBe(200);
    // A relay's pull is not delivery to a confirming agent: the request waits at the relay.
    expect(await read()).toMatchObject({
      state: 'pending',
      relay: 'relay-1',
      relayAt: iso(pulledAt),
      deliveredAt: null,
    });
    expect(updates().at(-1)).toMatchObject({ state: 'pending', relay: 'relay-1', relayAt: iso(pulledAt) });
    // A second pull (the relay asking again) does not move it.
    hub.clock.advance(1_000);
    await fetch(`${hub.hopUrl}/v1/bundles?for=ship-7`, { headers: hub.relay });
    expect((await read()).relayAt).toBe(iso(pulledAt));

    hub.clock.advance(60_000);
    const receivedAt = hub.clock.now();
    hub.agent.received(requestId);
    await pushV1(hub);
    expect(await read()).toMatchObject({ state: 'delivered', deliveredAt: iso(receivedAt), startedAt: null });

    hub.clock.advance(5_000);
    const startedAt = hub.clock.now();
    hub.agent.started(requestId);
    await pushV1(hub);
    expect(await read()).toMatchObject({ state: 'running', startedAt: iso(startedAt), doneAt: null });
    expect(updates().at(-1)).toMatchObject({ state: 'running', startedAt: iso(startedAt) });

    hub.clock.advance(30_000);
    const runId = hub.agent.plan('prod', 'net', 'drift');
    hub.agent.answered(requestId, runId);
    await pushV1(hub);
    expect(await read()).toMatchObject({
      state: 'done',
      runId,
      relayAt: iso(pulledAt),
      deliveredAt: iso(receivedAt),
      startedAt: iso(startedAt),
      doneAt: iso(hub.clock.now()),
    });
    // asked, at the relay, delivered, running, done: one live event each.
    expect(updates().map((u) => u.state)).toEqual(['pending', 'pending', 'delivered', 'running', 'done']);
  });

  it('never dates the agent’s receipt or start before the relay had the request (a clock estimate off)', async () => {
    h = await startHub();
    const hub = h;
    hub.agent.received(null);
    await pushV1(hub);
    const { requestId, read } = await asked(hub);
    // The agent's clock reads 20 s behind the hub's estimate of it: its word predates the relay's pull.
    hub.clock.advance(10_000);
    hub.agent.received(requestId);
    hub.agent.started(requestId);
    hub.clock.advance(20_000);
    const pulledAt = hub.clock.now();
    await fetch(`${hub.hopUrl}/v1/bundles?for=ship-7`, { headers: hub.relay });
    hub.clock.advance(5_000);
    await pushV1(hub);
    expect(await read()).toMatchObject({
      state: 'running',
      relayAt: iso(pulledAt),
      deliveredAt: iso(pulledAt),
      startedAt: iso(pulledAt),
    });
  });

  it('is running by the agent’s word on hop v2 as on v1', async () => {
    const r = await wire2Hub();
    h = r.hub;
    const { agent, client, info, hub } = r;
    let seq = 0;
    const push = async () => {
      const res = await client.exchangeWire2(await v2Push(agent, info.value.from, ++seq, hub.clock.now()));
      if (!res.ok) throw new Error(res.message);
    };
    agent.received(null);
    await push();
    const { requestId, read } = await asked(hub);
    hub.clock.advance(10_000);
    agent.received(requestId);
    hub.clock.advance(1_000);
    const startedAt = hub.clock.now();
    agent.started(requestId);
    await push();
    expect(await read()).toMatchObject({ state: 'running', startedAt: iso(startedAt) });
    client.abort();
  });

  it('keeps the start of the run that answered an older agent’s request', async () => {
    h = await startHub();
    const hub = h;
    const { read } = await asked(hub);
    await fetch(`${hub.hopUrl}/v1/bundles?for=ship-7`, { headers: hub.relay });
    // An older agent says nothing of receipt or start: the relay's pull is its delivery.
    expect(await read()).toMatchObject({ state: 'delivered', relay: 'relay-1' });
    hub.clock.advance(2_000);
    const runId = hub.agent.plan('prod', 'net', 'drift');
    await pushV1(hub);
    // AgentSim's runs start 1 s before they finish.
    expect(await read()).toMatchObject({ state: 'done', runId, startedAt: iso(hub.clock.now() - 1_000) });
  });
});
