import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WireError } from '@driftline/protocol';
import { Upload } from 'tus-js-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createHopServer, type HopServer, MemoryHopBackend, type Reserved } from '../src/index.js';

const A = { authorization: 'Bearer token-a' };
const B = { authorization: 'Bearer token-b' };
const servers: HopServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(admit?: (peer: { name: string }, size: number, r: Reserved) => void) {
  const backend = new MemoryHopBackend({ name: 'relay', role: 'relay' });
  backend.addToken('token-a', { name: 'ship-7', sites: ['ship-7'] });
  backend.addToken('token-b', { name: 'ship-8', sites: ['ship-8'] });
  const directory = mkdtempSync(join(tmpdir(), 'hop-tus-'));
  const hop = createHopServer(backend, { uploads: { directory, ...(admit ? { admit } : {}) } });
  servers.push(hop);
  const { url } = await hop.listen();
  return { backend, hop, url, directory };
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const meta = (data: Buffer) =>
  `sha256 ${Buffer.from(sha(data)).toString('base64')},contentType ${Buffer.from('x').toString('base64')}`;

async function create(url: string, auth: Record<string, string>, data: Buffer) {
  const r = await fetch(`${url}/v1/uploads/`, {
    method: 'POST',
    headers: {
      ...auth,
      'tus-resumable': '1.0.0',
      'upload-length': String(data.length),
      'upload-metadata': meta(data),
    },
  });
  return { status: r.status, location: r.headers.get('location') ?? '', body: await r.text() };
}

describe('tus uploads belong to the peer that created them', () => {
  it("answers 404 to another peer's HEAD, PATCH and DELETE, and keeps the upload for its owner", async () => {
    const { url } = await start();
    const data = Buffer.from('0123456789');
    const c = await create(url, A, data);
    expect(c.status).toBe(201);
    const at = new URL(c.location, url).toString();
    const tus = { 'tus-resumable': '1.0.0' };

    const head = await fetch(at, { method: 'HEAD', headers: { ...B, ...tus } });
    expect(head.status).toBe(404);
    const patch = await fetch(at, {
      method: 'PATCH',
      headers: { ...B, ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: Buffer.from('XXXXX'),
    });
    expect(patch.status).toBe(404);
    expect((await patch.json()).error.code).toBe('not-found');
    const del = await fetch(at, { method: 'DELETE', headers: { ...B, ...tus } });
    expect(del.status).toBe(404);

    const own = await fetch(at, { method: 'HEAD', headers: { ...A, ...tus } });
    expect(own.status).toBe(200);
    expect(own.headers.get('upload-offset')).toBe('0');
  });

  it('finishes an upload for its owner and passes on no record of who created it', async () => {
    const { url, backend } = await start();
    const data = Buffer.from('hello world');
    await new Promise<void>((resolve, reject) => {
      const u = new Upload(data, {
        endpoint: `${url}/v1/uploads/`,
        headers: A,
        metadata: { sha256: sha(data), contentType: 'text/plain', 'driftline-peer': 'ship-8' },
        retryDelays: [],
        onSuccess: () => resolve(),
        onError: reject,
      });
      u.start();
    });
    expect(backend.blobData.get(sha(data))?.metadata).toEqual({ contentType: 'text/plain' });
  });

  it('answers 404 to an upload id tus never issues', async () => {
    const { url } = await start();
    const r = await fetch(`${url}/v1/uploads/..%2F..%2Fetc`, {
      method: 'HEAD',
      headers: { ...A, 'tus-resumable': '1.0.0' },
    });
    expect(r.status).toBe(404);
  });
});

describe('tus creations pass the node’s admission (disk cap, quotas)', () => {
  it('refuses a creation that would pass the cap with 507, counting in-progress uploads, until one goes', async () => {
    const seen: Reserved[] = [];
    const { url } = await start((_peer, size, reserved) => {
      seen.push(reserved);
      if (reserved.total + size > 1000)
        throw new WireError('insufficient-storage', `${reserved.total} bytes are reserved`);
    });
    const big = Buffer.alloc(600, 1);
    const first = await create(url, A, big);
    expect(first.status).toBe(201);
    const second = await create(url, B, Buffer.alloc(600, 2));
    expect(second.status).toBe(507);
    expect(JSON.parse(second.body).error.code).toBe('insufficient-storage');
    expect(seen.at(-1)).toEqual({ total: 600, byPeer: 0 });
    const del = await fetch(new URL(first.location, url), {
      method: 'DELETE',
      headers: { ...A, 'tus-resumable': '1.0.0' },
    });
    expect(del.status).toBe(204);
    expect((await create(url, B, Buffer.alloc(600, 3))).status).toBe(201);
  });

  it('counts uploads left in progress by an earlier process', async () => {
    const first = await start();
    expect((await create(first.url, A, Buffer.alloc(700, 1))).status).toBe(201);
    await first.hop.close();
    const backend = new MemoryHopBackend();
    backend.addToken('token-a', { name: 'ship-7', sites: ['ship-7'] });
    const again = createHopServer(backend, { uploads: { directory: first.directory } });
    servers.push(again);
    const { url } = await again.listen();
    // the ledger is read at start; the first request waits for it
    await fetch(`${url}/v1/uploads/`, { method: 'OPTIONS' });
    expect(again.uploads.reservedBytes()).toBe(700);
    expect(again.uploads.reservedBy('ship-7')).toBe(700);
  });
});
