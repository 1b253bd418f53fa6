import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { BATCH_CONTENT_TYPE, CURSOR_HEADER, decodeBatch, encodeBatch, WireError } from '@driftline/protocol';
import { Upload } from 'tus-js-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHopServer, type HopServer, MemoryHopBackend } from '../src/index.js';
import { makeBundle } from '../src/testing.js';

const TOKEN = 'secret-token';
let backend: MemoryHopBackend;
let hop: HopServer;
let url: string;
let dir: string;

beforeEach(async () => {
  backend = new MemoryHopBackend({ name: 'terminal' });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  dir = mkdtempSync(join(tmpdir(), 'hop-'));
  hop = createHopServer(backend, {
    uploads: { directory: dir, maxSize: 1024 * 1024 },
    maxBatchBytes: 64 * 1024,
    extend: (app) =>
      app.use(async (ctx, next) => {
        if (ctx.path === '/api/hello') ctx.body = { hello: true };
        else if (ctx.path === '/api/boom') throw new WireError('conflict', 'boom');
        else await next();
      }),
  });
  ({ url } = await hop.listen());
});
afterEach(() => hop.close());

const auth = { authorization: `Bearer ${TOKEN}` };
const post = (body: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/bundles`, {
    method: 'POST',
    headers: { ...auth, 'content-type': BATCH_CONTENT_TYPE, ...headers },
    body: body as BodyInit,
  });

describe('POST /v1/bundles', () => {
  it('answers one receipt per bundle and marks a repeat as duplicate', async () => {
    const a = await makeBundle();
    const b = await makeBundle();
    const r1 = await post(encodeBatch([a.bytes, b.bytes]));
    expect(r1.status).toBe(200);
    const j1 = await r1.json();
    expect(j1.receipts.map((r: { status: string }) => r.status)).toEqual(['stored', 'stored']);
    expect(j1.receipts[0]).toMatchObject({ bundleId: a.id, index: 0, by: 'terminal' });
    const j2 = await (await post(encodeBatch([a.bytes]))).json();
    expect(j2.receipts[0].status).toBe('duplicate');
    expect(backend.stored.size).toBe(2);
  });

  it('accepts br and gzip bodies', async () => {
    const a = await makeBundle();
    const b = await makeBundle();
    const r1 = await post(brotliCompressSync(encodeBatch([a.bytes])), { 'content-encoding': 'br' });
    const r2 = await post(gzipSync(encodeBatch([b.bytes])), { 'content-encoding': 'gzip' });
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect(backend.stored.size).toBe(2);
  });

  it('refuses a missing or wrong token with 401 and a code', async () => {
    const a = await makeBundle();
    const r = await fetch(`${url}/v1/bundles`, { method: 'POST', body: encodeBatch([a.bytes]) as BodyInit });
    expect(r.status).toBe(401);
    expect((await r.json()).error.code).toBe('unauthorized');
    const r2 = await post(encodeBatch([a.bytes]), { authorization: 'Bearer nope' });
    expect(r2.status).toBe(401);
    expect(backend.stored.size).toBe(0);
  });

  it('refuses an oversized body with 413, by Content-Length and after decompression', async () => {
    const big = new Uint8Array(65 * 1024);
    const r = await post(big);
    expect(r.status).toBe(413);
    expect((await r.json()).error.code).toBe('payload-too-large');
    const bomb = gzipSync(new Uint8Array(10 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const r2 = await post(bomb, { 'content-encoding': 'gzip' });
    expect(r2.status).toBe(413);
  });

  it('answers broken framing with 400 and the codec code', async () => {
    const r = await post(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]));
    expect(r.status).toBe(400);
    expect((await r.json()).error.code).toBe('bad-bundle');
    const v9 = encodeBatch([]);
    v9[3] = 9;
    const r2 = await post(v9);
    expect((await r2.json()).error.code).toBe('unsupported-version');
  });

  it('answers a wrong content type with 415 and an unknown encoding with 415', async () => {
    expect((await post(encodeBatch([]), { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(encodeBatch([]), { 'content-encoding': 'zstd' })).status).toBe(415);
  });

  it('renders a backend WireError (disk full) as its status', async () => {
    backend.failWith = new WireError('insufficient-storage');
    const r = await post(encodeBatch([(await makeBundle()).bytes]));
    expect(r.status).toBe(507);
    expect((await r.json()).error.code).toBe('insufficient-storage');
  });
});

describe('GET /v1/bundles', () => {
  it('serves a batch and a cursor, then only what came after it', async () => {
    const a = await makeBundle();
    const b = await makeBundle();
    backend.enqueueDownlink('ship-7', a.bytes);
    backend.enqueueDownlink('other', b.bytes);
    const r = await fetch(`${url}/v1/bundles?for=ship-7`, { headers: auth });
    expect(r.status).toBe(200);
    const batch = decodeBatch(new Uint8Array(await r.arrayBuffer()));
    expect(batch.ok && batch.value.length).toBe(1);
    const cursor = r.headers.get(CURSOR_HEADER);
    expect(cursor).toMatch(/^\d+$/);
    const r2 = await fetch(`${url}/v1/bundles?for=ship-7&after=${cursor}`, { headers: auth });
    const batch2 = decodeBatch(new Uint8Array(await r2.arrayBuffer()));
    expect(batch2.ok && batch2.value.length).toBe(0);
  });

  it('refuses a bad query with bad-query and another site with forbidden', async () => {
    const r = await fetch(`${url}/v1/bundles?for=BAD SITE`, { headers: auth });
    expect(r.status).toBe(400);
    expect((await r.json()).error.code).toBe('bad-query');
    const r2 = await fetch(`${url}/v1/bundles?for=other`, { headers: auth });
    expect(r2.status).toBe(403);
    expect((await r2.json()).error.code).toBe('forbidden');
  });
});

describe('tus uploads and blobs', () => {
  const upload = (data: Buffer, sha: string) =>
    new Promise<string>((resolve, reject) => {
      const u = new Upload(data, {
        endpoint: `${url}/v1/uploads/`,
        headers: auth,
        metadata: { sha256: sha, contentType: 'application/json' },
        retryDelays: [],
        onSuccess: () => resolve(u.url ?? ''),
        onError: reject,
      });
      u.start();
    });

  it('takes an upload, checks its sha256, and serves it with Range and If-Range', async () => {
    const data = Buffer.from('0123456789'.repeat(100));
    const sha = createHash('sha256').update(data).digest('hex');
    await upload(data, sha);
    expect(backend.blobData.get(sha)?.metadata).toEqual({ contentType: 'application/json' });

    const full = await fetch(`${url}/v1/blobs/${sha}`, { headers: auth });
    expect(full.status).toBe(200);
    expect(Buffer.from(await full.arrayBuffer()).equals(data)).toBe(true);
    const etag = full.headers.get('etag') ?? '';
    expect(etag.startsWith('"')).toBe(true);

    const part = await fetch(`${url}/v1/blobs/${sha}`, { headers: { ...auth, range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 10-19/1000');
    expect(await part.text()).toBe('0123456789');

    const changed = await fetch(`${url}/v1/blobs/${sha}`, {
      headers: { ...auth, range: 'bytes=10-19', 'if-range': '"stale"' },
    });
    expect(changed.status).toBe(200);
    await changed.arrayBuffer();

    const past = await fetch(`${url}/v1/blobs/${sha}`, { headers: { ...auth, range: 'bytes=5000-' } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe('bytes */1000');
    expect((await past.json()).error.code).toBe('range-not-satisfiable');
  });

  it('refuses an upload whose bytes do not match the announced sha256, and keeps nothing', async () => {
    const data = Buffer.from('hello');
    await expect(upload(data, 'a'.repeat(64))).rejects.toThrow(/460/);
    expect(backend.blobData.size).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses an upload without a token or without sha256', async () => {
    const r = await fetch(`${url}/v1/uploads/`, {
      method: 'POST',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '5' },
    });
    expect(r.status).toBe(401);
    expect((await r.json()).error.code).toBe('unauthorized');
    const r2 = await fetch(`${url}/v1/uploads/`, {
      method: 'POST',
      headers: { ...auth, 'tus-resumable': '1.0.0', 'upload-length': '5' },
    });
    expect(r2.status).toBe(400);
  });

  it('answers an unknown blob with 404 and a malformed id with 400', async () => {
    expect((await fetch(`${url}/v1/blobs/${'b'.repeat(64)}`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${url}/v1/blobs/xyz`, { headers: auth })).status).toBe(400);
  });
});

describe('health, metrics, extension routes', () => {
  it('serves health and Prometheus text', async () => {
    const h = await (await fetch(`${url}/v1/health`)).json();
    expect(h).toMatchObject({ ok: true, role: 'hub', name: 'terminal' });
    await post(encodeBatch([(await makeBundle()).bytes]));
    const m = await (await fetch(`${url}/metrics`, { headers: auth })).text();
    expect(m).toContain('driftline_hop_bytes_in_total{peer="ship-7"}');
  });

  it('mounts caller routes and renders their errors, and 404s the rest with a code', async () => {
    expect(await (await fetch(`${url}/api/hello`)).json()).toEqual({ hello: true });
    const boom = await fetch(`${url}/api/boom`);
    expect(boom.status).toBe(409);
    expect((await boom.json()).error.code).toBe('conflict');
    const none = await fetch(`${url}/nope`);
    expect(none.status).toBe(404);
    expect((await none.json()).error.code).toBe('not-found');
    const wrong = await fetch(`${url}/v1/health`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
  });

  it('does not cut long requests off (requestTimeout off by default)', () => {
    expect(hop.server.requestTimeout).toBe(0);
  });
});

describe('slow links', () => {
  it('keeps idle keep-alive connections open for an hour, longer than any emulated round trip', () => {
    const hop = createHopServer(new MemoryHopBackend(), { uploads: { directory: '/tmp' } });
    expect(hop.server.keepAliveTimeout).toBe(3_600_000);
    expect(hop.server.requestTimeout).toBe(0);
  });
});
