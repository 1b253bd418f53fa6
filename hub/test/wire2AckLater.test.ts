import * as A from '@automerge/automerge';
import { pushFormsOf } from '@driftline/hop';
import { wire2 } from '@driftline/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TestHub } from './hubFixture.js';
import { pullAcks, v2Push, wire2Hub } from './wire2Fixture.js';

/**
 * A push of a round under way asks its ack to come with the agent's next push (push field 11, `ackLater`:
 * docs/decisions/525-acks-wait-for-the-round.md): the hub holds that ack, answers the next push with one
 * ack covering both, and sends a held ack by itself once its seconds have passed, or as it stops.
 */
let h: TestHub | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function registered() {
  const r = await wire2Hub({ api: { public: true } }); // `/metrics` readable without a session
  h = r.hub;
  // the hub states the forms; an agent writes the field only then, and reads a 204 as held only then
  expect(r.info.value.pushForms).toContain(wire2.PUSH_FORM_ACK_LATER);
  expect(r.info.value.pushForms).toContain(wire2.PUSH_FORM_CUSTODY_LATER);
  return { ...r, forms: pushFormsOf(r.info.value.pushForms) };
}

describe('acks held for the round at the hub', () => {
  it('acks two pushes of a round with one ack, naming the last: the first asked to wait', async () => {
    const { agent, client, info, hub, forms } = await registered();
    const from = info.value.from;
    const start = await pullAcks(client, agent, from, 1, 0); // the fixture's first run, acked before
    const first = agent.plan('prod', 'net', 'drift');
    const r2 = await client.exchangeWire2(
      await v2Push(agent, from, 2, hub.clock.now(), { forms, ackLaterS: 600 }),
    );
    expect(r2.ok).toBe(true);
    // held, and said so by a bare 204: its custody comes with the next push (decision 530)
    expect(r2.ok && [r2.value.status, r2.value.body.length]).toEqual([204, 0]);
    // stored and shown at once; only its ack waits
    expect((await hub.hub.store.getCell('ship-7', 'prod', 'net'))?.runId).toBe(first);
    const held = await pullAcks(client, agent, from, 3, start.cursor);
    expect([...held.v2, ...held.v1]).toEqual([]);
    expect(await (await fetch(`${hub.url}/metrics`)).text()).toMatch(/^hub_acks_held 1$/m);
    const since = A.getHeads(agent.doc);
    const second = agent.plan('prod', 'dns', 'changes');
    const r4 = await client.exchangeWire2(await v2Push(agent, from, 4, hub.clock.now(), { forms, since }));
    expect(r4.ok).toBe(true);
    // the round's last push: the node's signed custody, cumulative, covering push 2 as well
    const custody = r4.ok ? wire2.decodeMessage(r4.value.body) : null;
    expect(custody?.ok && [custody.value.kind, (custody.value.body as wire2.CustodyBody).upTo]).toEqual([
      'custody',
      4,
    ]);
    expect((await hub.hub.store.getRun(second))?.runId).toBe(second);
    const acked = await pullAcks(client, agent, from, 5, held.cursor);
    expect(acked.v2.map((a) => a.upTo)).toEqual([4]);
    expect(await (await fetch(`${hub.url}/metrics`)).text()).toMatch(/^hub_acks_held 0$/m);
    client.abort();
  });

  it('sends a held ack by itself once its seconds pass, dated when the push was taken', async () => {
    const { agent, client, info, hub, forms } = await registered();
    const from = info.value.from;
    agent.plan('prod', 'net', 'drift');
    const takenAt = hub.clock.now();
    await client.exchangeWire2(await v2Push(agent, from, 1, takenAt, { forms, ackLaterS: 120 }));
    hub.clock.advance(119_000);
    await hub.hub.ingest.sendHeldAcks(false);
    expect((await pullAcks(client, agent, from, 2, 0)).v2).toEqual([]);
    hub.clock.advance(1_000);
    await hub.hub.ingest.sendHeldAcks(false);
    const acked = await pullAcks(client, agent, from, 3, 0);
    expect(acked.v2.map((a) => [a.upTo, a.committedAt])).toEqual([[1, takenAt]]);
    client.abort();
  });

  it("sends it on the hub's own check, with no push after it", async () => {
    const { agent, client, info, hub, forms } = await registered();
    const from = info.value.from;
    agent.plan('prod', 'net', 'drift');
    // the hub's check is an interval it starts as it takes the push: on virtual time here
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      await client.exchangeWire2(await v2Push(agent, from, 1, hub.clock.now(), { forms, ackLaterS: 30 }));
      expect(hub.hub.ingest.heldAcks.size).toBe(1);
      // not due before its seconds pass, however often the hub checks
      await vi.advanceTimersByTimeAsync(3_000);
      expect(hub.hub.ingest.heldAcks.size).toBe(1);
      hub.clock.advance(30_000);
      // the hub checks every second while it holds an ack: bounded at 30 virtual seconds here
      let upTo: number[] = [];
      for (let i = 0, seq = 2; i < 30 && upTo.length === 0; i++, seq++) {
        await vi.advanceTimersByTimeAsync(1_000);
        upTo = (await pullAcks(client, agent, from, seq, 0)).v2.map((a) => a.upTo);
      }
      expect(upTo).toEqual([1]);
      expect(hub.hub.ingest.heldAcks.size).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    client.abort();
  });

  it('sends what it holds as it stops', async () => {
    const { agent, client, info, hub, forms } = await registered();
    const from = info.value.from;
    agent.plan('prod', 'net', 'drift');
    await client.exchangeWire2(await v2Push(agent, from, 1, hub.clock.now(), { forms, ackLaterS: 600 }));
    expect(hub.hub.ingest.heldAcks.size).toBe(1);
    await hub.hub.ingest.close();
    expect(hub.hub.ingest.heldAcks.size).toBe(0);
    expect((await pullAcks(client, agent, from, 2, 0)).v2.map((a) => a.upTo)).toEqual([1]);
    client.abort();
  });
});
