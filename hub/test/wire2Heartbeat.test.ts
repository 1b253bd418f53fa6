import { brotliCompressSync } from 'node:zlib';
import * as A from '@automerge/automerge';
import { encodePush } from '@driftline/hop';
import type { HopClient } from '@driftline/hop/client';
import { encodeHeartbeatOf, type HeartbeatBackend, heartbeatCellKeys } from '@driftline/hop/heartbeat';
import { concatBytes, wire2 } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSim } from './agentSim.js';
import type { TestHub } from './hubFixture.js';
import { wire2Hub } from './wire2Fixture.js';

/**
 * A quiet round as a heartbeat at the hub (docs/decisions/500-heartbeat-rebuilds-the-change.md): the hub
 * rebuilds the agent's heartbeat change from its copy of the document, merges it only when it hashes as
 * the agent signed, and stores it as if it had come as bytes; its v2 ack says it rebuilds heartbeats only
 * to an agent that writes them. A heartbeat it cannot rebuild is refused and stores nothing.
 */
let h: TestHub | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const KEYS = ['prod/dns', 'prod/net'];

/** The agent's changes since its ack as a v2 push: the last one as its heartbeat when `asHeartbeat`. */
async function push(
  agent: AgentSim,
  from: number,
  seq: number,
  t0: number,
  asHeartbeat?: { hash: string; named?: string },
) {
  let changes = A.saveSince(agent.doc, agent.acked);
  let heartbeat: wire2.HeartbeatBody | undefined;
  if (asHeartbeat) {
    const { hash, named = hash } = asHeartbeat;
    const deps = A.decodeChange(A.getBackend(agent.doc).getChangeByHash(hash) as Uint8Array).deps;
    const keys = heartbeatCellKeys(A.getBackend(agent.doc) as unknown as HeartbeatBackend, deps);
    heartbeat =
      encodeHeartbeatOf(
        keys,
        KEYS.map((key) => ({ key, at: t0 })),
        named,
      ) ?? undefined;
    const last = A.getBackend(agent.doc).getChangeByHash(hash) as Uint8Array;
    changes = changes.subarray(0, changes.length - last.length);
  }
  return encodePush(
    { epoch: agent.epoch, changes, blobs: [], priority: 'status', ...(heartbeat ? { heartbeat } : {}) },
    { from, seq, t0 },
    agent.keys.privateKey,
  );
}

/** The hub's v2 acks and rejections on the agent's downlink, from a pull. */
async function downlink(client: HopClient, agent: AgentSim, from: number, seq: number) {
  const pulled = await client.exchangeWire2(
    await wire2.encodeMessage(
      { kind: 'pull', from, to: 0, seq, body: { have: 0, holdS: 0 } },
      agent.keys.privateKey,
    ),
  );
  if (!pulled.ok) throw new Error(pulled.message);
  const page = wire2.decodePullAnswer(pulled.value.body);
  if (!page.ok) throw new Error(page.error.message);
  return page.value.items.flatMap((i) => {
    const m = wire2.decodeMessage(i);
    return m.ok && m.value.kind === 'ack' ? [m.value.body as wire2.AckBody] : [];
  });
}

/** The heads of the document as the hub stored it, loaded from its chunks. */
async function storedHeads(hub: TestHub, docId: string) {
  const doc = A.load(concatBytes(...(await hub.hub.store.docChunks(docId))));
  return A.getHeads(doc).sort();
}

async function registered() {
  const { agent, client, info, hub } = await wire2Hub();
  h = hub;
  // two cells planned and acknowledged, the confirmed map declared (decision 330)
  for (const k of KEYS) agent.plan('prod', k.split('/')[1] as string);
  agent.declareConfirmed();
  const first = await client.exchangeWire2(await push(agent, info.value.from, 1, hub.clock.now()));
  if (!first.ok) throw new Error(first.message);
  agent.acked = A.getHeads(agent.doc);
  return { agent, client, from: info.value.from, hub };
}

describe('a quiet round as a heartbeat at the hub', () => {
  it('rebuilds the change, moves the cells, stores the same document and says so only to an agent that writes them', async () => {
    const { agent, client, from, hub } = await registered();
    // an agent that has written no heartbeat change is never told (an older one would refuse the field)
    expect((await downlink(client, agent, from, 2)).map((a) => a.heartbeats)).toEqual([undefined]);
    hub.clock.advance(6 * 3600_000);
    const at = hub.clock.now();
    const hash = agent.heartbeat(KEYS);
    const message = await push(agent, from, 3, at, { hash });
    // the round's change is ~2 kB raw; as a heartbeat the whole push is about 150 B
    expect(message.length).toBeLessThan(200);
    const r = await client.exchangeWire2(message);
    if (!r.ok) throw new Error(r.message);
    for (const k of KEYS) {
      const cell = await hub.hub.store.getCell('ship-7', 'prod', k.split('/')[1] as string);
      expect(cell?.plannedAt).toBe(at);
    }
    // the stored document is the agent's: same heads, read back from the store
    expect(await storedHeads(hub, agent.docId)).toEqual(A.getHeads(agent.doc).sort());
    const acks = await downlink(client, agent, from, 4);
    expect(acks.at(-1)).toMatchObject({ upTo: 3, heartbeats: true });
    // the same round sent again (its ack lost: a new message, not a duplicate by id) is taken, not refused
    const again = await client.exchangeWire2(await push(agent, from, 5, hub.clock.now(), { hash }));
    if (!again.ok) throw new Error(again.message);
    expect(await storedHeads(hub, agent.docId)).toEqual(A.getHeads(agent.doc).sort());
    expect((await downlink(client, agent, from, 6)).at(-1)).toMatchObject({ upTo: 5 });
    client.abort();
  });

  it('refuses a heartbeat that does not rebuild to the change the agent named, and stores nothing of it', async () => {
    const { agent, client, from, hub } = await registered();
    const before = await hub.hub.store.getCell('ship-7', 'prod', 'net');
    hub.clock.advance(6 * 3600_000);
    const hash = agent.heartbeat(KEYS);
    // a hub whose Automerge made another change would see this: a hash it does not rebuild
    const named = 'ff'.repeat(32);
    const r = await client.exchangeWire2(await push(agent, from, 3, hub.clock.now(), { hash, named }));
    expect(r.ok).toBe(false);
    expect((await hub.hub.store.getCell('ship-7', 'prod', 'net'))?.plannedAt).toBe(before?.plannedAt);
    expect(await storedHeads(hub, agent.docId)).toEqual([...agent.acked].sort());
    // gaps that inflate past their cap (a few hundred bytes standing for a megabyte): refused, not inflated
    const bomb = brotliCompressSync(new Uint8Array(1024 * 1024));
    const message = await push(agent, from, 4, hub.clock.now(), { hash });
    const m = wire2.decodeMessage(message);
    if (!m.ok) throw new Error(m.error.message);
    const body = m.value.body as wire2.PushBody;
    const heartbeat = {
      ...(body.heartbeat as wire2.HeartbeatBody),
      gaps: new Uint8Array(bomb),
      gapsEncoding: 'br' as const,
    };
    const hostile = await encodePush(
      { epoch: agent.epoch, changes: new Uint8Array(), blobs: [], priority: 'status', heartbeat },
      { from, seq: 4, t0: hub.clock.now() },
      agent.keys.privateKey,
    );
    const refused = await client.exchangeWire2(hostile);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toMatch(/do not inflate within/);
    expect(await storedHeads(hub, agent.docId)).toEqual([...agent.acked].sort());
    client.abort();
  });
});
