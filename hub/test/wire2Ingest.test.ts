import * as A from '@automerge/automerge';
import { pushFormsOf } from '@driftline/hop';
import {
  BATCH_CONTENT_TYPE,
  decodeBundle,
  decodePayload,
  encodeBatch,
  publicKeyFromText,
  type Receipt,
  wire2,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/adapters/hop/HubHopBackend.js';
import type { TestHub } from './hubFixture.js';
import { pullAcks, v2Push, wire2Hub } from './wire2Fixture.js';

/**
 * Hop v2 at the hub (docs/decisions/495-hop-v2-on-the-agent-link.md): a push posted to `/v2` by an agent
 * that registered the key the hub enrolled, or carried verbatim in a relay's v1 batch, is verified by the
 * short id of that key and merged as a doc-delta, and acked on the downlink; a push that is not the
 * agent's word, or that a relay may not carry for its site, is refused and stores nothing.
 */
let h: TestHub | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const postBatch = async (url: string, token: string, bundles: Uint8Array[]) =>
  (
    (await (
      await fetch(`${url}/v1/bundles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': BATCH_CONTENT_TYPE },
        body: encodeBatch(bundles) as Uint8Array<ArrayBuffer>,
      })
    ).json()) as { receipts: Receipt[] }
  ).receipts;

/** A hub with ship-7/a1 enrolled, and that agent's key registered for v2 with the hub itself. */
async function registered() {
  const r = await wire2Hub();
  h = r.hub;
  return r;
}

describe('hop v2 pushes at the hub', () => {
  it('merges a push an agent posts to /v2 itself, answers its custody, and acks it on the downlink', async () => {
    const { agent, client, info, hub } = await registered();
    expect(info.value.node).toBe(0);
    const runId = agent.plan('prod', 'net', 'drift');
    const r = await client.exchangeWire2(await v2Push(agent, info.value.from, 1, hub.clock.now()));
    if (!r.ok) throw new Error(r.message);
    const custody = wire2.decodeMessage(r.value.body);
    expect(custody.ok && custody.value.kind).toBe('custody');
    expect((await hub.hub.store.getCell('ship-7', 'prod', 'net'))?.runId).toBe(runId);
    const pulled = await client.exchangeWire2(
      await wire2.encodeMessage(
        { kind: 'pull', from: info.value.from, to: 0, seq: 2, body: { have: 0, holdS: 0 } },
        agent.keys.privateKey,
      ),
    );
    if (!pulled.ok) throw new Error(pulled.message);
    const page = wire2.decodePullAnswer(pulled.value.body);
    if (!page.ok) throw new Error(page.error.message);
    // the ack names the push (sequence 1 and its signature's tip), signed by the hub's key
    const acks = page.value.items
      .map((i) => wire2.decodeMessage(i))
      .filter((m) => m.ok && m.value.kind === 'ack');
    expect(acks).toHaveLength(1);
    const ack = acks[0];
    if (!ack?.ok) throw new Error('no ack');
    expect(ack.value).toMatchObject({ from: 0, to: info.value.from, seq: 1 });
    expect((ack.value.body as wire2.AckBody).upTo).toBe(1);
    expect(await wire2.verifyMessage(ack.value, await publicKeyFromText(hub.hub.publicKeyText))).toBe(true);
    client.abort();
  });

  it('reads a push in its compact forms, and says it does (decision 510)', async () => {
    const { agent, client, info, hub } = await registered();
    expect(info.value.pushForms).toEqual(
      expect.arrayContaining([wire2.PUSH_FORM_BLOB_LIST, wire2.PUSH_FORM_DZ1]),
    );
    const runId = agent.plan('prod', 'net', 'drift');
    const sha256 = 'cd'.repeat(32);
    const push = await v2Push(agent, info.value.from, 1, hub.clock.now(), {
      blobs: [{ sha256, size: 1234, runId }],
      forms: pushFormsOf(info.value.pushForms),
    });
    const m = wire2.decodeMessage(push);
    const body = m.ok ? (m.value.body as wire2.PushBody) : null;
    // field 9, not the JSON of field 7
    expect(body?.blobList).toBeDefined();
    expect(body?.blobs).toBeUndefined();
    // one plan's change: smaller against the shared dictionary than brotli'd
    expect(body?.changesEncoding).toBe('dz1');
    const r = await client.exchangeWire2(push);
    if (!r.ok) throw new Error(r.message);
    expect((await hub.hub.store.getCell('ship-7', 'prod', 'net'))?.runId).toBe(runId);
    expect(await hub.hub.store.docsAnnouncing(sha256)).toEqual([agent.docId]);
  });

  it('refuses a push whose binary blob list is torn, and stores nothing of it', async () => {
    const { agent, client, info, hub } = await registered();
    agent.plan('prod', 'torn', 'drift');
    const b = decodeBundle(await agent.delta());
    const p = b.ok ? decodePayload('doc-delta', b.value.payload) : null;
    if (!p?.ok) throw new Error('no delta');
    const torn = await wire2.encodeMessage(
      {
        kind: 'push',
        from: info.value.from,
        to: 0,
        seq: 1,
        body: {
          epoch: p.value.epoch,
          changes: p.value.changes,
          t0: hub.clock.now(),
          blobList: Uint8Array.of(0x81, 0x83, 0x58),
        },
      },
      agent.keys.privateKey,
    );
    const r = await client.exchangeWire2(torn);
    expect(r.ok ? '' : r.message).toMatch(/blob list/);
    expect(await hub.hub.store.getCell('ship-7', 'prod', 'torn')).toBeNull();
  });

  it('takes a push in a relay batch only for a site the relay acts for, and only as the agent signed it', async () => {
    const { agent, client, info, hub } = await registered();
    client.abort();
    const from = info.value.from;
    await hub.hub.store.commit({
      peers: [{ tokenSha256: sha256Hex('far-token'), name: 'relay-9', sites: ['ship-9'] }],
    });
    const runId = agent.plan('prod', 'net', 'drift');
    const push = await v2Push(agent, from, 1, hub.clock.now());
    // a relay acting for ship-9 only may not carry ship-7's push
    const [far] = await postBatch(hub.hopUrl, 'far-token', [push]);
    expect([far?.status, far?.code]).toEqual(['rejected', 'forbidden']);
    // one byte of the changes changed on the way: not the agent's word
    const tampered = push.slice();
    tampered[40] = (tampered[40] as number) ^ 1;
    const [bad] = await postBatch(hub.hopUrl, 'relay-token', [tampered]);
    expect(bad?.status).toBe('rejected');
    expect(['bad-signature', 'bad-bundle']).toContain(bad?.code);
    expect((await hub.hub.store.getCell('ship-7', 'prod', 'net'))?.runId).not.toBe(runId);
    // as it came, through the relay that acts for ship-7: merged; the same again is a duplicate (D2)
    const [ok] = await postBatch(hub.hopUrl, 'relay-token', [push]);
    expect(ok?.status).toBe('stored');
    expect((await hub.hub.store.getCell('ship-7', 'prod', 'net'))?.runId).toBe(runId);
    const [again] = await postBatch(hub.hopUrl, 'relay-token', [push]);
    expect(again?.status).toBe('duplicate');
  });

  it('does not ack a push whose changes wait for an earlier push it never got: it acks the heads it holds, and the push once the gap is filled', async () => {
    const { agent, client, info, hub } = await registered();
    const from = info.value.from;
    agent.acked = A.getHeads(agent.doc); // the fixture's first run, merged at the hub
    const pull = (seq: number, have: number) => pullAcks(client, agent, from, seq, have);
    const before = await pull(1, 0);
    // push 2 carries the first run; a hop answers it with custody of its own and drops it (fake custody,
    // or a relay that lost it), so push 3 carries only what came after, as the agent sends it (resend.ts)
    const lost = agent.plan('prod', 'net', 'drift');
    const custodyHeads = A.getHeads(agent.doc);
    const push2 = await v2Push(agent, from, 2, hub.clock.now());
    const later = agent.plan('prod', 'net', 'changes');
    const push3 = await v2Push(agent, from, 3, hub.clock.now(), { since: custodyHeads });
    const [r3] = await postBatch(hub.hopUrl, 'relay-token', [push3]);
    expect(r3?.status).toBe('stored'); // held, waiting for the change it depends on
    expect(await hub.hub.store.getRun(lost)).toBeNull();
    const gap = await pull(4, before.cursor);
    // an ack of push 3 would tell the agent the hub holds both runs: it would never send them again
    expect(gap.v2.map((a) => a.upTo)).not.toContain(3);
    // what the hub does hold, it says as heads: the agent sends everything after them again
    expect(gap.v1.map((a) => a.heads)).toEqual([agent.acked]);
    // the lost push comes after all: both runs are merged, and the ack names it
    const [r2] = await postBatch(hub.hopUrl, 'relay-token', [push2]);
    expect(r2?.status).toBe('stored');
    expect((await hub.hub.store.getRun(lost))?.runId).toBe(lost);
    expect((await hub.hub.store.getRun(later))?.runId).toBe(later);
    const filled = await pull(5, gap.cursor);
    expect(filled.v2.map((a) => a.upTo)).toContain(2);
    client.abort();
  });

  it('does not ack a push that carried no changes after one it never got: it acks the heads it holds', async () => {
    const { agent, client, info, hub } = await registered();
    const from = info.value.from;
    agent.acked = A.getHeads(agent.doc);
    const before = await pullAcks(client, agent, from, 1, 0);
    // push 2 carries the run and its detail's announcement, and is lost past a hop's custody; push 3
    // announces the detail again (its receipt grew stale) and carries no changes: none since that custody
    const lost = agent.plan('prod', 'net', 'drift');
    const custodyHeads = A.getHeads(agent.doc);
    const detail = { sha256: 'ab'.repeat(32), size: 10, runId: lost };
    const push3 = await v2Push(agent, from, 3, hub.clock.now(), { since: custodyHeads, blobs: [detail] });
    const [r3] = await postBatch(hub.hopUrl, 'relay-token', [push3]);
    expect(r3?.status).toBe('stored');
    const acks = await pullAcks(client, agent, from, 4, before.cursor);
    // an ack naming push 3 would be taken as the hub holding the heads it was signed at: the lost run
    expect(acks.v2.map((a) => a.upTo)).not.toContain(3);
    expect(acks.v1.map((a) => a.heads)).toEqual([agent.acked]);
    expect(await hub.hub.store.getRun(lost)).toBeNull();
    client.abort();
  });
});
