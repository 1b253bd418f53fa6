import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatch } from '@driftline/protocol';
import { until } from '@driftline/protocol/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HopClient } from '../src/client.js';
import { createHopServer, type HopServer, MemoryHopBackend } from '../src/index.js';
import { makeBundle } from '../src/testing.js';

const TOKEN = 'secret-token';
let backend: MemoryHopBackend;
let hop: HopServer;
let url: string;
const servers: Server[] = [];

beforeEach(async () => {
  backend = new MemoryHopBackend({ name: 'terminal' });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  hop = createHopServer(backend, {
    uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-client-')), maxSize: 8 * 1024 * 1024 },
  });
  ({ url } = await hop.listen());
});
afterEach(async () => {
  await hop.close();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A server that answers every request with `status` and `body`. */
async function answering(status: number, body: string): Promise<string> {
  const s = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('HopClient', () => {
  it('posts a batch, reads one receipt per bundle and times the exchange', async () => {
    const client = new HopClient({ url, token: TOKEN });
    expect(client.clock()).toBeNull();
    const bundles = [await makeBundle(), await makeBundle()];
    const r = await client.postBatch(encodeBatch(bundles.map((b) => b.bytes)), { count: 2 });
    expect(r.ok && r.value.receipts.map((x) => x.status)).toEqual(['stored', 'stored']);
    expect(r.ok && r.value.bytes).toBeGreaterThan(0);
    expect(client.clock()).not.toBeNull();
  });

  it("fails with the server's code, not retryable, when the credential is refused", async () => {
    const client = new HopClient({ url, token: 'wrong' });
    const r = await client.postBatch(encodeBatch([(await makeBundle()).bytes]));
    expect(r).toMatchObject({ ok: false, code: 'unauthorized', status: 401, retryable: false });
    expect(!r.ok && r.message).toMatch(/^HTTP 401 unauthorized: /);
  });

  it('marks server trouble, a closed port and a foreign answer retryable', async () => {
    const down = new HopClient({ url: await answering(503, 'maintenance'), token: 't' });
    expect(await down.probe()).toMatchObject({ ok: false, code: 'http-error', retryable: true, status: 503 });
    const portal = new HopClient({ url: await answering(200, '<html>captive portal</html>'), token: 't' });
    expect(await portal.postBatch(encodeBatch([]))).toMatchObject({
      ok: false,
      code: 'bad-answer',
      retryable: true,
    });
    const closed = await answering(200, '');
    await new Promise((r) => servers.pop()?.close(r));
    const gone = new HopClient({ url: closed, token: 't' });
    const r = await gone.probe();
    expect(r).toMatchObject({ ok: false, code: 'unreachable', retryable: true });
    expect(!r.ok && r.message).toContain('ECONNREFUSED');
  });

  it('pulls a page of downlink with its cursor', async () => {
    const ack = await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never);
    backend.enqueueDownlink('ship-7', ack.bytes);
    const client = new HopClient({ url, token: TOKEN });
    const r = await client.pullDownlink('ship-7', undefined, 10);
    expect(r.ok && r.value.bundles.map(sha256)).toEqual([sha256(ack.bytes)]);
    expect(r.ok && r.value.cursor).toBeTruthy();
  });

  it('holds a downlink pull that asks to wait until the site has downlink, and says it held it', async () => {
    const client = new HopClient({ url, token: TOKEN });
    const pulling = client.pullDownlink('ship-7', undefined, 10, { waitS: 30 });
    let answered = false;
    void pulling.then(() => {
      answered = true;
    });
    await until(() => backend.held.size === 1, 'one pull held');
    expect(answered).toBe(false);
    const ack = await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never);
    backend.enqueueDownlink('ship-7', ack.bytes);
    const r = await pulling;
    expect(r.ok && r.value.bundles.map(sha256)).toEqual([sha256(ack.bytes)]);
    expect(r.ok && r.value.held).toBe(true);
    expect(backend.held.size).toBe(0);

    // Downlink already waiting: answered at once; an abandoned pull frees its hold.
    backend.enqueueDownlink('ship-7', ack.bytes);
    const now = await client.pullDownlink('ship-7', undefined, 10, { waitS: 30 });
    expect(now.ok && now.value.bundles).toHaveLength(2);
    const stop = new AbortController();
    const cursor = now.ok ? now.value.cursor : undefined;
    const abandoned = client.pullDownlink('ship-7', cursor, 10, { waitS: 30, signal: stop.signal });
    await until(() => backend.held.size === 1, 'the pull to abandon held');
    stop.abort();
    expect(await abandoned).toMatchObject({ ok: false });
    await until(() => backend.held.size === 0, 'the abandoned hold freed');
  });

  it('takes an answer at once from an upstream that cannot hold pulls, and says it was not held', async () => {
    const plain = new MemoryHopBackend({ name: 'old' });
    plain.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
    Object.defineProperty(plain, 'waitForDownlink', { value: undefined });
    const old = createHopServer(plain, {
      uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-client-')), maxSize: 1024 },
    });
    try {
      const r = await new HopClient({ url: (await old.listen()).url, token: TOKEN }).pullDownlink(
        'ship-7',
        undefined,
        10,
        { waitS: 30 },
      );
      expect(r.ok && [r.value.bundles.length, r.value.held]).toEqual([0, false]);
    } finally {
      await old.close();
    }
  });

  it('uploads a blob by tus, hands over its URL, and fails for good when the bytes do not match', async () => {
    const client = new HopClient({ url, token: TOKEN });
    const data = randomBytes(300_000);
    const urls: string[] = [];
    const ok = await client.upload({
      sha256: sha256(data),
      size: data.length,
      body: data,
      onUrl: (u) => urls.push(u),
    });
    expect(ok).toEqual({ ok: true, value: undefined });
    expect(urls).toHaveLength(1);
    expect(backend.blobData.get(sha256(data))?.bytes.equals(data)).toBe(true);
    const bad = await client.upload({ sha256: 'a'.repeat(64), size: data.length, body: data });
    expect(bad).toMatchObject({ ok: false, code: 'checksum-mismatch', status: 460, retryable: false });
  });

  it('fetches a Range into a sink, never past the end asked for; a missing blob may come later', async () => {
    const data = randomBytes(100_000);
    backend.blobData.set(sha256(data), { bytes: data, metadata: {}, mtimeMs: 0 });
    const client = new HopClient({ url, token: TOKEN });
    const got: Buffer[] = [];
    const sink = { write: async (c: Uint8Array) => got.push(Buffer.from(c)) };
    const r = await client.fetchRange(sha256(data), 1000, 60_999, sink);
    expect(r).toMatchObject({ ok: true, offset: 61_000 });
    expect(Buffer.concat(got).equals(data.subarray(1000, 61_000))).toBe(true);
    const missing = await client.fetchRange('b'.repeat(64), 0, 9, sink);
    expect(missing).toMatchObject({ ok: false, status: 404, retryable: true, offset: 0 });
  });

  it('ends requests in progress when aborted', async () => {
    const hanging = createServer(() => {});
    servers.push(hanging);
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const client = new HopClient({
      url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
      token: 't',
    });
    const pending = client.probe();
    client.abort();
    expect(await pending).toMatchObject({ ok: false, code: 'aborted', retryable: true });
    hanging.closeAllConnections();
  });
});
