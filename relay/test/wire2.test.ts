import {
  createHopServer,
  encodePush,
  MemoryHopBackend,
  type Peer,
  type SourceClocks,
  type Wire2Backend,
  wire2KeyId,
  wire2NodeId,
} from '@driftline/hop';
import { HopClient } from '@driftline/hop/client';
import { wire2Registration } from '@driftline/hop/testing';
import {
  BATCH_CONTENT_TYPE,
  type BundleId,
  encodeBatch,
  generateSigningKeyPair,
  PLAN_DETAIL_CONTENT_TYPE,
  publicKeyFromText,
  publicKeyRaw,
  type Receipt,
  type SigningKeyPair,
  wire2,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateRelayKey } from '../src/adapters/fs/relayKey.js';
import { makeBundle, registerWhenHeard, startRelay, tmp, until, upstreamOf } from './helpers.js';

/**
 * Hop v2 at a relay (docs/decisions/495-hop-v2-on-the-agent-link.md), real Koa on 127.0.0.1:0, real
 * SQLite: an agent registers its key with its token, pushes and pulls in signed messages, and the relay
 * carries the push upstream byte for byte. And what a peer that lies or lost its right may not do.
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** The hub's place: keeps v2 pushes as they came (a v1 memory node refuses them), and says it speaks v2. */
class Terminal extends MemoryHopBackend {
  readonly pushes: Uint8Array[] = [];
  readonly wire2: Wire2Backend = {
    nodeId: 0,
    register: async () => 0,
    sender: async () => null,
    sign: () => new Uint8Array(64),
  };
  /** Each v2 push's source clock, as the relay's batch said (`driftline-source-clocks` with its own clock). */
  readonly pushClocks: ReturnType<SourceClocks>[] = [];
  override async accept(
    peer: Peer,
    bundles: readonly Uint8Array[],
    clocks?: SourceClocks,
  ): Promise<Receipt[]> {
    const v1 = await super.accept(peer, bundles, clocks);
    return bundles.map((bytes, index) => {
      if (!wire2.isWire2Message(bytes)) return v1[index] as Receipt;
      this.pushes.push(bytes.slice());
      this.pushClocks.push(clocks?.('ship-7/a1') ?? null);
      return { bundleId: null, index, status: 'stored', by: 'hub' };
    });
  }
}

async function world(hub: MemoryHopBackend = new Terminal({ name: 'hub', role: 'hub' })) {
  hub.addToken('hub-token', { name: 'relay', sites: ['*'] });
  const hop = createHopServer(hub, { uploads: { directory: tmp('term-') } });
  const up = await hop.listen();
  closers.push(() => hop.close());
  const { relay, url, cfg } = await startRelay({ sites: ['ship-7', 'ship-8'] }, [
    upstreamOf('hub', up.url, 'hub-token'),
  ]);
  closers.push(() => relay.stop());
  const token = relay.tokens.add('ship-7', ['ship-7']);
  const keys = await generateSigningKeyPair();
  const client = new HopClient({ url, token, timeoutMs: 10_000 });
  closers.push(async () => client.abort());
  return { hub: hub as Terminal, relay, url, cfg, token, keys, client };
}

/** Registers the agent's key; a relay that has not heard from its upstream yet says so (503): again. */
async function register(client: HopClient, keys: SigningKeyPair, site = 'ship-7') {
  return registerWhenHeard(client, await wire2Registration(keys, site));
}

const pullMessage = (from: number, to: number, seq: number, have: number, holdS: number, key: CryptoKey) =>
  wire2.encodeMessage({ kind: 'pull', from, to, seq, body: { have, holdS } }, key);

describe('hop v2 at a relay', () => {
  it('registers the key, answers a push with its signed custody and stamp, and carries the push upstream verbatim', async () => {
    const { hub, client, keys, cfg } = await world();
    const info = await register(client, keys);
    if (!info.ok) throw new Error(info.message);
    expect(info.value).toMatchObject({ wire: [1, 2], node: wire2NodeId('relay-a'), keep: 2 });
    expect(info.value.from).toBe(wire2KeyId(await publicKeyRaw(keys.publicKey)));
    const t0 = Date.now();
    // its blob announcement in binary (decision 510): a relay reads the push's fields, and carries it
    const blobs = [{ sha256: 'ab'.repeat(32) as never, size: 9, contentType: PLAN_DETAIL_CONTENT_TYPE }];
    const push = await encodePush(
      { epoch: 1, changes: new Uint8Array(500).fill(7), blobs, priority: 'failure' },
      { from: info.value.from, seq: 3, t0 },
      keys.privateKey,
      { blobList: true },
    );
    const m = wire2.decodeMessage(push);
    expect(m.ok && (m.value.body as wire2.PushBody).blobList).toBeDefined();
    const r = await client.exchangeWire2(push);
    if (!r.ok) throw new Error(r.message);
    const custody = wire2.decodeMessage(r.value.body);
    if (!custody.ok) throw new Error(custody.error.message);
    expect(custody.value).toMatchObject({
      kind: 'custody',
      from: info.value.node,
      to: info.value.from,
      seq: 3,
    });
    const body = custody.value.body as wire2.CustodyBody;
    expect(body.upTo).toBe(3);
    expect(body.stamp?.[0]).toBe(t0);
    // signed by the relay's own key (decision 290's key): the agent holds the relay's word for it
    const relayKey = await publicKeyFromText(loadOrCreateRelayKey(cfg.dataDir).publicKey);
    expect(await wire2.verifyMessage(custody.value, relayKey)).toBe(true);
    await until(() => hub.pushes.length === 1, 10_000, 'the push upstream');
    expect(Buffer.from(hub.pushes[0] as Uint8Array).equals(Buffer.from(push))).toBe(true);
  });

  it('answers a push of a round under way 204 where its upstream states custody later, and the next push with custody of both (decision 530)', async () => {
    for (const forms of [[...wire2.PUSH_FORMS], [wire2.PUSH_FORM_ACK_LATER]]) {
      const terminal = new Terminal({ name: 'hub', role: 'hub' });
      Object.assign(terminal.wire2, { pushForms: () => forms });
      const { hub, client, keys } = await world(terminal);
      const info = await register(client, keys);
      if (!info.ok) throw new Error(info.message);
      const later = forms.includes(wire2.PUSH_FORM_CUSTODY_LATER);
      expect(info.value.pushForms?.includes(wire2.PUSH_FORM_CUSTODY_LATER)).toBe(later);
      const push = (seq: number, ackLaterS?: number) =>
        encodePush(
          { epoch: 1, changes: new Uint8Array(50).fill(seq), blobs: [], priority: 'status' },
          { from: info.value.from, seq, t0: Date.now(), ackLaterS },
          keys.privateKey,
          { ackLater: true },
        );
      const first = await client.exchangeWire2(await push(1, 300));
      if (!first.ok) throw new Error(first.message);
      // held either way (carried on at once); said by a bare 204 only where the agent reads one
      expect(first.value.status).toBe(later ? 204 : 200);
      const last = await client.exchangeWire2(await push(2));
      if (!last.ok) throw new Error(last.message);
      const custody = wire2.decodeMessage(last.value.body);
      expect(custody.ok && (custody.value.body as wire2.CustodyBody).upTo).toBe(2);
      await until(() => hub.pushes.length === 2, 10_000, 'both pushes upstream');
      for (const c of closers.splice(0).reverse()) await c();
    }
  });

  it("notes the push's clock term as the agent's clock and posts it upstream composed, as v1's driftline-clock", async () => {
    const { hub, client, keys } = await world();
    const info = await register(client, keys);
    if (!info.ok) throw new Error(info.message);
    const agentTerm = { offsetMs: 420_000, uncertaintyMs: 2040 };
    const push = (seq: number, clock: typeof agentTerm | null) =>
      encodePush(
        { epoch: 1, changes: Uint8Array.of(seq), blobs: [], priority: 'status' },
        { from: info.value.from, seq, t0: Date.now(), clock },
        keys.privateKey,
        { clock: true },
      ).then((m) => client.exchangeWire2(m));
    expect((await push(1, agentTerm)).ok).toBe(true);
    await until(() => hub.pushes.length === 1, 10_000, 'the push upstream');
    // one machine clock: the relay's own term (relay − hub) is ~0 within its round trip
    const [first] = hub.pushClocks;
    if (!first) throw new Error('the relay posted the push with no source clock');
    expect(first.uncertaintyMs).toBeGreaterThanOrEqual(agentTerm.uncertaintyMs);
    expect(Math.abs(first.offsetMs - agentTerm.offsetMs)).toBeLessThanOrEqual(
      first.uncertaintyMs - agentTerm.uncertaintyMs,
    );
    // a push with no term (an agent just restarted) composes with the last one the agent gave
    expect((await push(2, null)).ok).toBe(true);
    await until(() => hub.pushes.length === 2, 10_000, 'the second push upstream');
    expect(hub.pushClocks[1]?.offsetMs).toBeCloseTo(agentTerm.offsetMs, -2);
  });

  it('holds a pull until the site has downlink, answers it with the items and the cursor, then 204', async () => {
    const { hub, client, keys, relay } = await world();
    const info = await register(client, keys);
    if (!info.ok) throw new Error(info.message);
    const { from, node } = info.value;
    const held = client.exchangeWire2(
      await pullMessage(from, node, 1, 0, 30, keys.privateKey),
      undefined,
      30,
    );
    const ack = await makeBundle({
      kind: 'ack',
      source: 'hub',
      destination: { site: 'ship-7' as never },
      priority: 'control',
    });
    // the downlink comes while the pull is held, not before it reaches the relay
    await until(() => relay.backend.held.size === 1, 10_000, 'the pull held at the relay');
    hub.enqueueDownlink('ship-7', ack.bytes);
    const r = await held;
    if (!r.ok) throw new Error(r.message);
    const page = wire2.decodePullAnswer(r.value.body);
    if (!page.ok) throw new Error(page.error.message);
    expect(page.value.items.map((i) => Buffer.from(i).toString('hex'))).toEqual([
      Buffer.from(ack.bytes).toString('hex'),
    ]);
    const again = await client.exchangeWire2(
      await pullMessage(from, node, 2, page.value.cursor, 0, keys.privateKey),
    );
    expect(again.ok && again.value.status).toBe(204);
  });

  it('refuses what a lying or replaying peer sends: a forged sender, a replay, another node, a site not its own', async () => {
    const { client, keys, relay, url } = await world();
    const info = await register(client, keys);
    if (!info.ok) throw new Error(info.message);
    const { from, node } = info.value;
    const thief = await generateSigningKeyPair();
    // the victim's short id, the thief's signature
    const forged = await client.exchangeWire2(await pullMessage(from, node, 1, 0, 0, thief.privateKey));
    expect(forged.ok ? 200 : forged.code).toBe('bad-signature');
    const once = await pullMessage(from, node, 5, 0, 0, keys.privateKey);
    expect((await client.exchangeWire2(once)).ok).toBe(true);
    const replay = await client.exchangeWire2(once);
    expect(replay.ok ? 200 : replay.status).toBe(409);
    // an agent that lost its state file registers again and numbers from 1: taken
    const restarted = await register(client, keys);
    expect(restarted.ok).toBe(true);
    const fresh = await client.exchangeWire2(await pullMessage(from, node, 1, 0, 0, keys.privateKey));
    expect(fresh.ok).toBe(true);
    const elsewhere = await client.exchangeWire2(await pullMessage(from, 0, 6, 0, 0, keys.privateKey));
    expect(elsewhere.ok ? 200 : elsewhere.status).toBe(400);
    // a registration must be signed by the key it names: naming another's key without it is refused
    const named = await wire2Registration(keys);
    const unproven = await client.registerWire2({ ...named, proof: (await wire2Registration(thief)).proof });
    expect(unproven.ok ? 200 : unproven.code).toBe('bad-signature');
    // ship-7's token names a site it does not act for
    const foreign = await register(client, keys, 'ship-8');
    expect(foreign.ok ? 200 : foreign.status).toBe(403);
    // ship-8's token cannot take over ship-7's agent by registering its public key
    const other = new HopClient({ url, token: relay.tokens.add('ship-8', ['ship-8']), timeoutMs: 10_000 });
    closers.push(async () => other.abort());
    const takeover = await register(other, keys, 'ship-8');
    expect(takeover.ok ? 200 : takeover.status).toBe(409);
    expect(relay.tokens.wire2Key(from)?.site).toBe('ship-7');
    // nor post ship-7's push in a v1 batch of its own: the key is ship-7's here
    const push = await encodePush(
      { epoch: 1, changes: new Uint8Array(10), blobs: [], priority: 'status' },
      { from, seq: 9, t0: Date.now() },
      keys.privateKey,
    );
    const posted = await fetch(`${url}/v1/bundles`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${relay.tokens.add('ship-8', ['ship-8'])}`,
        'content-type': BATCH_CONTENT_TYPE,
      },
      body: encodeBatch([push]) as BodyInit,
    });
    const [receipt] = ((await posted.json()) as { receipts: Receipt[] }).receipts;
    expect([receipt?.status, receipt?.code]).toEqual(['rejected', 'forbidden']);
  });

  it('cuts a held pull at once when the token that registered the key is revoked, and refuses its messages after', async () => {
    const { client, keys, relay } = await world();
    const info = await register(client, keys);
    if (!info.ok) throw new Error(info.message);
    const { from, node } = info.value;
    const held = client.exchangeWire2(
      await pullMessage(from, node, 1, 0, 600, keys.privateKey),
      undefined,
      600,
    );
    // the revocation comes while the pull is held, not before it reaches the relay
    await until(() => relay.backend.held.size === 1, 10_000, 'the pull held at the relay');
    relay.tokens.revoke('ship-7');
    // its hold is 10 minutes: only the revocation ends it within this test's run
    const r = await held;
    expect(r.ok ? 200 : r.status).toBe(401);
    const push = await encodePush(
      { epoch: 1, changes: new Uint8Array(10), blobs: [], priority: 'status' },
      { from, seq: 2, t0: Date.now() },
      keys.privateKey,
    );
    const after = await client.exchangeWire2(push);
    expect(after.ok ? 200 : after.status).toBe(401);
    // a new token of the same name does not bring the key back: it must be registered again
    relay.tokens.add('ship-7', ['ship-7']);
    const again = await client.exchangeWire2(push);
    expect(again.ok ? 200 : again.status).toBe(401);
    expect(relay.tokens.wire2Key(from)).toBeNull();
    expect(relay.custody.nextBatch(Date.now(), 1 << 20, 10).map((b) => b.id as BundleId)).toEqual([]);
  });

  it('speaks v1 to its agents while its upstream does not speak v2 (an older hub would refuse the pushes)', async () => {
    const { client, keys } = await world(new MemoryHopBackend({ name: 'hub', role: 'hub' }));
    const r = await register(client, keys);
    expect(r.ok ? 200 : r.status).toBe(404);
    const peer = await client.peerInfo();
    expect(peer.ok && peer.value.wire).toBeUndefined();
    // and a message sent anyway (an agent registered before) is answered 404: it falls back to v1
    const pull = await client.exchangeWire2(await pullMessage(1, 1, 1, 0, 0, keys.privateKey));
    expect(pull.ok ? 200 : pull.status).toBe(404);
  });

  it('answers a registration 503 (ask again soon) while it has not heard from its upstream, not 404', async () => {
    // an upstream on a port nothing listens on: the relay cannot tell yet whether it speaks v2
    const { relay, url } = await startRelay({ sites: ['ship-7'] }, [
      upstreamOf('hub', 'http://127.0.0.1:9', 'hub-token'),
    ]);
    closers.push(() => relay.stop());
    const client = new HopClient({ url, token: relay.tokens.add('ship-7', ['ship-7']), timeoutMs: 10_000 });
    closers.push(async () => client.abort());
    const r = await client.registerWire2(await wire2Registration(await generateSigningKeyPair()));
    expect(r.ok ? 200 : [r.status, r.code]).toEqual([503, 'unavailable']);
  });
});
