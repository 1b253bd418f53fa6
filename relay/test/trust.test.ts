import { createHopServer, MemoryHopBackend, type Peer } from '@driftline/hop';
import {
  BATCH_CONTENT_TYPE,
  type BundleHeader,
  decodeBatch,
  decodeBundle,
  encodeBatch,
  encodeBundle,
  encodeUlid,
  generateSigningKeyPair,
  type Receipt,
  verifyBundle,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { makeBundle, startRelay, tmp, until, upstreamOf } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function relay(
  over: Parameters<typeof startRelay>[0] = {},
  ups: Parameters<typeof startRelay>[1] = [],
) {
  const r = await startRelay(over, ups);
  closers.push(() => r.relay.stop());
  return r;
}

const post = (url: string, token: string, bundles: Uint8Array[]) =>
  fetch(`${url}/v1/bundles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': BATCH_CONTENT_TYPE },
    body: encodeBatch(bundles) as BodyInit,
  });
const receiptsOf = async (r: Response) => ((await r.json()) as { receipts: Receipt[] }).receipts;
const metricsText = async (url: string, token: string) =>
  (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();

describe('a downstream peer acts only for its own sites', () => {
  it('refuses bundles whose source is another site, stores none of them, and counts them by peer', async () => {
    const { relay: r, url } = await relay();
    const token = r.tokens.add('ship-7', ['ship-7']);
    const own = await makeBundle();
    const foreign = await makeBundle({ source: { site: 'ship-8' as never, agent: 'a1' as never } });
    const receipts = await receiptsOf(await post(url, token, [foreign.bytes, own.bytes]));
    expect(receipts.map((x) => [x.index, x.status, x.code])).toEqual([
      [0, 'rejected', 'forbidden'],
      [1, 'stored', undefined],
    ]);
    expect(receipts[0]?.message).toContain("not for the bundle's source 'ship-8'");
    expect(r.custody.nextBatch(Date.now(), 1 << 20, 10).map((b) => b.id)).toEqual([own.id]);
    expect(await metricsText(url, token)).toContain(
      'driftline_relay_peer_refusals_total{peer="ship-7",reason="foreign-site"} 1',
    );
  });

  it("never lets a downstream peer fill a site's downlink: acks and control come only from upstream", async () => {
    const { relay: r, url } = await relay({ sites: ['ship-8'] });
    const seven = r.tokens.add('ship-7', ['ship-7']);
    const eight = r.tokens.add('ship-8', ['ship-8']);
    const fakeAck = await makeBundle({
      kind: 'ack',
      source: 'hub',
      destination: { site: 'ship-8' as never },
      priority: 'control',
    });
    const sideways = await makeBundle({ destination: { site: 'ship-8' as never } });
    const receipts = await receiptsOf(await post(url, seven, [fakeAck.bytes, sideways.bytes]));
    expect(receipts.map((x) => x.code)).toEqual(['forbidden', 'forbidden']);
    const down = await fetch(`${url}/v1/bundles?for=ship-8`, {
      headers: { authorization: `Bearer ${eight}` },
    });
    const batch = decodeBatch(new Uint8Array(await down.arrayBuffer()));
    expect(batch.ok && batch.value.length).toBe(0);
    // not even for its own site
    const ownDown = await makeBundle({
      kind: 'ack',
      source: 'hub',
      destination: { site: 'ship-7' as never },
    });
    expect((await receiptsOf(await post(url, seven, [ownDown.bytes])))[0]?.code).toBe('forbidden');
    expect(r.custody.queueStats(Date.now())).toEqual([]);
  });

  it('lets a downstream relay post for every site its token names', async () => {
    const { relay: r, url } = await relay();
    const token = r.tokens.add('relay-2', ['ship-7', 'ship-8']);
    const a = await makeBundle();
    const b = await makeBundle({ source: { site: 'ship-8' as never } });
    const receipts = await receiptsOf(await post(url, token, [a.bytes, b.bytes]));
    expect(receipts.map((x) => x.status)).toEqual(['stored', 'stored']);
  });
});

/** A terminal that verifies signatures before custody, as the hub does. */
class VerifyingTerminal extends MemoryHopBackend {
  constructor(private readonly key: CryptoKey) {
    super({ name: 'hub', role: 'hub' });
  }
  override async accept(peer: Peer, bundles: readonly Uint8Array[]): Promise<Receipt[]> {
    const checked = await Promise.all(
      bundles.map(async (b) => {
        const d = decodeBundle(b);
        return d.ok && (await verifyBundle(d.value, this.key));
      }),
    );
    const good = bundles.filter((_, i) => checked[i]);
    const inner = await super.accept(peer, good);
    let g = 0;
    return bundles.map((b, index): Receipt => {
      if (checked[index]) return { ...(inner[g++] as Receipt), index };
      const d = decodeBundle(b);
      return {
        bundleId: d.ok ? d.value.header.id : null,
        index,
        status: 'rejected',
        code: 'bad-signature',
        by: 'hub',
      };
    });
  }
}

describe('deduplication by id and content hash', () => {
  it('keeps the genuine bundle after an altered copy of it came first; the hub refuses the copy', async () => {
    const keys = await generateSigningKeyPair();
    const header = {
      id: encodeUlid(Date.now(), new Uint8Array(10).fill(9)),
      kind: 'doc-delta',
      source: { site: 'ship-7', agent: 'a1' },
      destination: 'hub',
      created: Date.now(),
      lifetimeS: 3600,
      priority: 'status',
      doc: 'ship-7/a1/1',
    } as unknown as BundleHeader & { kind: 'doc-delta' };
    const genuine = await encodeBundle(
      header,
      { epoch: 1, changes: new Uint8Array([1, 2, 3]), blobs: [] },
      keys.privateKey,
    );
    const altered = genuine.slice();
    const at = altered.length - 70; // a payload byte: same id, bytes the signature no longer covers
    altered[at] = (altered[at] as number) ^ 0xff;

    const verifying = new VerifyingTerminal(keys.publicKey);
    verifying.addToken('hub-token', { name: 'relay', sites: ['*'] });
    const hub = createHopServer(verifying, { uploads: { directory: tmp('term-') } });
    const { url: hubUrl } = await hub.listen();
    closers.push(() => hub.close());
    verifying.failWith = new Error('hub down'); // hold both at the relay first
    const { relay: r, url } = await relay({}, [upstreamOf('hub', hubUrl, 'hub-token')]);
    const token = r.tokens.add('ship-7', ['ship-7']);

    expect((await receiptsOf(await post(url, token, [altered])))[0]?.status).toBe('stored');
    // today's relay answered `duplicate` here, and the agent waited hours before resending
    expect((await receiptsOf(await post(url, token, [genuine])))[0]?.status).toBe('stored');
    expect((await receiptsOf(await post(url, token, [genuine])))[0]?.status).toBe('duplicate');
    expect((await receiptsOf(await post(url, token, [altered])))[0]?.status).toBe('duplicate');

    verifying.failWith = null;
    r.poke();
    await until(() => verifying.stored.has(header.id), 10_000, 'the genuine bundle at the hub');
    expect(Buffer.from(verifying.stored.get(header.id) as Uint8Array).equals(Buffer.from(genuine))).toBe(
      true,
    );
    await until(() => r.custody.queueStats(Date.now()).length === 0, 10_000, 'relay custody empty');
    expect(r.custody.counter('refused_upstream')).toBe(1);
  });
});

describe('per-peer quotas', () => {
  it('answers 429 with Retry-After past peerMaxBundles, stores nothing of that batch, and leaves other peers alone', async () => {
    const { relay: r, url } = await relay({ limits: { peerMaxBundles: 5, retryAfterS: 7 } });
    const seven = r.tokens.add('ship-7', ['ship-7']);
    const eight = r.tokens.add('ship-8', ['ship-8']);
    const five = await Promise.all(Array.from({ length: 5 }, () => makeBundle()));
    expect(
      (
        await post(
          url,
          seven,
          five.map((b) => b.bytes),
        )
      ).status,
    ).toBe(200);
    const over = await post(url, seven, [(await makeBundle()).bytes, (await makeBundle()).bytes]);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('7');
    expect((await over.json()).error.code).toBe('too-many-requests');
    // a duplicate adds nothing to what the peer holds
    expect((await post(url, seven, [five[0]!.bytes])).status).toBe(200);
    const other = await makeBundle({ source: { site: 'ship-8' as never } });
    expect((await post(url, eight, [other.bytes])).status).toBe(200);
    expect(r.custody.held('ship-7')).toMatchObject({ bundles: 5 });
    const m = await metricsText(url, seven);
    expect(m).toContain('driftline_relay_peer_refusals_total{peer="ship-7",reason="quota-bundles"} 1');
    expect(m).toContain('driftline_relay_peer_held_bundles{peer="ship-7"} 5');
  });

  it('answers 507 past peerMaxBytes', async () => {
    const { relay: r, url } = await relay({ limits: { peerMaxBytes: 4000 } });
    const seven = r.tokens.add('ship-7', ['ship-7']);
    let status = 200;
    let stored = 0;
    for (let i = 0; i < 100 && status === 200; i++) {
      const res = await post(url, seven, [(await makeBundle()).bytes]);
      status = res.status;
      if (status === 200) stored++;
      else expect((await res.json()).error.code).toBe('insufficient-storage');
    }
    expect(status).toBe(507);
    expect(stored).toBeGreaterThan(0);
    expect(r.custody.held('ship-7').bytes).toBeLessThanOrEqual(4000);
    expect(await metricsText(url, seven)).toContain(
      'driftline_relay_peer_refusals_total{peer="ship-7",reason="quota-bytes"} 1',
    );
  });
});
