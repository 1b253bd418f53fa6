import { createHash, randomBytes } from 'node:crypto';
import {
  BATCH_CONTENT_TYPE,
  type BundleHeader,
  encodeBatch,
  encodeBundle,
  encodeUlid,
  generateSigningKeyPair,
} from '@driftline/protocol';
import { Upload } from 'tus-js-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from './helpers.js';

const KiB = 1024;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const keys = generateSigningKeyPair();
/** `n` doc-delta bundles of about `size` bytes each from ship-7. */
async function bigBundles(n: number, size: number): Promise<Uint8Array[]> {
  const { privateKey } = await keys;
  return Promise.all(
    Array.from({ length: n }, () =>
      encodeBundle(
        {
          id: encodeUlid(Date.now(), randomBytes(10)),
          kind: 'doc-delta',
          source: { site: 'ship-7', agent: 'a1' },
          destination: 'hub',
          created: Date.now(),
          lifetimeS: 3600,
          priority: 'status',
          doc: 'ship-7/a1/1',
        } as unknown as BundleHeader & { kind: 'doc-delta' },
        { epoch: 1, changes: randomBytes(size), blobs: [] },
        privateKey,
      ),
    ),
  );
}

async function capped(maxBytes: number) {
  const r = await startRelay({ storage: { maxBytes } }, []);
  closers.push(() => r.relay.stop());
  const seven = r.relay.tokens.add('ship-7', ['ship-7']);
  const eight = r.relay.tokens.add('ship-8', ['ship-8']);
  const post = async (bundles: Uint8Array[]) =>
    fetch(`${r.url}/v1/bundles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seven}`, 'content-type': BATCH_CONTENT_TYPE },
      body: encodeBatch(bundles) as BodyInit,
    });
  const create = (token: string, length: number) =>
    fetch(`${r.url}/v1/uploads/`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'tus-resumable': '1.0.0',
        'upload-length': String(length),
        'upload-metadata': `sha256 ${Buffer.from('a'.repeat(64)).toString('base64')}`,
      },
    });
  const upload = (data: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const u = new Upload(data, {
        endpoint: `${r.url}/v1/uploads/`,
        headers: { authorization: `Bearer ${seven}` },
        metadata: { sha256: createHash('sha256').update(data).digest('hex') },
        retryDelays: [],
        onSuccess: () => resolve(),
        onError: reject,
      });
      u.start();
    });
  return { ...r, seven, eight, post, create, upload };
}

describe('storage.maxBytes covers the store, blobs and uploads in progress', () => {
  it('refuses bundles with 507 once blobs in custody fill the cap', async () => {
    const r = await capped(1024 * KiB);
    await r.upload(randomBytes(700 * KiB));
    const res = await r.post(await bigBundles(8, 50 * KiB));
    expect(res.status).toBe(507);
    expect((await res.json()).error.code).toBe('insufficient-storage');
    expect(r.relay.custody.queueStats(Date.now())).toEqual([]);
    expect(r.relay.custody.usage().total).toBeLessThanOrEqual(1024 * KiB);
  });

  it('counts the whole Upload-Length of an upload in progress, and frees it when the upload goes', async () => {
    const r = await capped(1024 * KiB);
    const c = await r.create(r.eight, 700 * KiB);
    expect(c.status).toBe(201);
    expect((await r.post(await bigBundles(8, 50 * KiB))).status).toBe(507);
    const del = await fetch(new URL(c.headers.get('location') ?? '', r.url), {
      method: 'DELETE',
      headers: { authorization: `Bearer ${r.eight}`, 'tus-resumable': '1.0.0' },
    });
    expect(del.status).toBe(204);
    expect((await r.post(await bigBundles(8, 50 * KiB))).status).toBe(200);
  });

  it('refuses a tus creation whose Upload-Length would pass the cap with 507 and a code', async () => {
    const r = await capped(1024 * KiB);
    const alone = await r.create(r.seven, 2048 * KiB);
    expect(alone.status).toBe(507);
    expect((await alone.json()).error.code).toBe('insufficient-storage');
    expect((await r.create(r.seven, 600 * KiB)).status).toBe(201);
    expect((await r.create(r.eight, 600 * KiB)).status).toBe(507);
    const m = await (
      await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${r.seven}` } })
    ).text();
    expect(m).toContain('driftline_relay_peer_refusals_total{peer="ship-8",reason="storage-full"} 1');
    expect(m).toMatch(/driftline_relay_disk_used_bytes \d+/);
  });
});

describe('blobs belong to the peer that uploaded them', () => {
  it('serves a blob in custody to its uploader and answers 404 to any other peer', async () => {
    const r = await capped(64 * 1024 * KiB);
    const data = randomBytes(10 * KiB);
    await r.upload(data);
    const sha = createHash('sha256').update(data).digest('hex');
    const mine = await fetch(`${r.url}/v1/blobs/${sha}`, { headers: { authorization: `Bearer ${r.seven}` } });
    expect(mine.status).toBe(200);
    await mine.arrayBuffer();
    const theirs = await fetch(`${r.url}/v1/blobs/${sha}`, {
      headers: { authorization: `Bearer ${r.eight}` },
    });
    expect(theirs.status).toBe(404);
    expect((await theirs.json()).error.code).toBe('not-found');
  });
});

describe('/metrics access', () => {
  it('needs a token: a peer token or a metrics-only one, which opens nothing else', async () => {
    const r = await capped(64 * 1024 * KiB);
    const none = await fetch(`${r.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="driftline"');
    const prom = r.relay.tokens.add('prometheus', [], 'metrics');
    expect((await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${prom}` } })).status).toBe(
      200,
    );
    expect(
      (await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${r.seven}` } })).status,
    ).toBe(200);
    const hop = await fetch(`${r.url}/v1/bundles?for=ship-7`, {
      headers: { authorization: `Bearer ${prom}` },
    });
    expect(hop.status).toBe(401);
    r.relay.tokens.revoke('prometheus');
    expect((await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${prom}` } })).status).toBe(
      401,
    );
  });

  it('is open with metrics.public: true', async () => {
    const r = await startRelay({ metrics: { public: true } }, []);
    closers.push(() => r.relay.stop());
    expect((await fetch(`${r.url}/metrics`)).status).toBe(200);
  });
});
