import { encodePush } from '@driftline/hop';
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
import type { AgentSim } from './agentSim.js';
import type { TestHub } from './hubFixture.js';
import { wire2Hub } from './wire2Fixture.js';

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

/** The agent's next round (changes since its last ack) as a v2 push. */
async function v2Push(agent: AgentSim, from: number, seq: number, t0: number): Promise<Uint8Array> {
  const b = decodeBundle(await agent.delta());
  if (!b.ok) throw new Error(b.error.message);
  const p = decodePayload('doc-delta', b.value.payload);
  if (!p.ok) throw new Error(p.error.message);
  return encodePush({ ...p.value, priority: 'status' }, { from, seq, t0 }, agent.keys.privateKey);
}

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
});
