import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { constants, createBrotliCompress } from 'node:zlib';
import { BATCH_CONTENT_TYPE, RunDetailSchema } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { FileBlobs } from '../src/adapters/fs/FileBlobs.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});
const start = async (extra: object = {}) => {
  const h = await startHub(extra);
  hubs.push(h);
  return h;
};

/** 300 MiB of zeros, brotli-compressed to a few hundred bytes (streamed: never 300 MiB in memory). */
async function brotliBomb(): Promise<Buffer> {
  const c = createBrotliCompress({
    params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 24 },
  });
  const out: Buffer[] = [];
  c.on('data', (d: Buffer) => out.push(d));
  const zeros = Buffer.alloc(1 << 20);
  for (let i = 0; i < 300; i++) if (!c.write(zeros)) await new Promise((r) => c.once('drain', r));
  c.end();
  await new Promise((r) => c.once('end', r));
  return Buffer.concat(out);
}

/** POSTs `body` chunked (no Content-Length) and resolves with the status. */
function postChunked(url: string, headers: Record<string, string>, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('hub listeners and input limits', () => {
  it('serves the hop API and the people side on separate listeners when listen.hop and listen.api are set', async () => {
    const h = await start({
      listen: { hop: { host: '127.0.0.1', port: 0 }, api: { host: '127.0.0.1', port: 0 } },
    });
    expect(h.hopUrl).not.toBe(h.url);
    const admin = await addTestUser(h.hub.store, 'ada', ['admin']);
    for (const path of ['/api/matrix', '/metrics', '/api/session', '/'])
      expect((await fetch(`${h.hopUrl}${path}`, { headers: admin })).status, `hop ${path}`).toBe(404);
    expect((await fetch(`${h.hopUrl}/v1/health`)).status).toBe(200);
    expect((await fetch(`${h.hopUrl}/v1/bundles?for=ship-7`, { headers: h.relay })).status).toBe(200);

    expect((await fetch(`${h.url}/v1/health`)).status).toBe(200);
    expect((await fetch(`${h.url}/api/matrix`, { headers: admin })).status).toBe(200);
    expect((await fetch(`${h.url}/metrics`, { headers: admin })).status).toBe(200);
    expect((await fetch(`${h.url}/v1/bundles?for=ship-7`, { headers: h.relay })).status).toBe(404);
    const post = await fetch(`${h.url}/v1/bundles`, {
      method: 'POST',
      headers: { ...h.relay, 'content-type': BATCH_CONTENT_TYPE },
      body: new Uint8Array(8),
    });
    expect(post.status).toBe(404);
    expect((await fetch(`${h.url}/v1/uploads`, { method: 'POST', headers: h.relay })).status).toBe(404);
  });

  it('refuses a file over api.maxUploadBytes from its Content-Length and while streaming, storing nothing', async () => {
    const h = await start({ api: { maxUploadBytes: 1000 } });
    const pub = await addTestUser(h.hub.store, 'pia', ['publisher']);
    const declared = await fetch(`${h.url}/api/publications?site=ship-7&name=big`, {
      method: 'POST',
      headers: pub,
      body: Buffer.alloc(5000),
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe('payload-too-large');
    const streamed = await postChunked(
      `${h.url}/api/publications?site=ship-7&name=big`,
      pub,
      Buffer.alloc(5000),
    );
    expect(streamed).toBe(413);
    expect(await h.hub.publications.listPublications()).toEqual([]);
    const small = await fetch(`${h.url}/api/publications?site=ship-7&name=ok`, {
      method: 'POST',
      headers: pub,
      body: Buffer.alloc(1000),
    });
    expect(small.status).toBe(201);
  });

  it('refuses a JSON body over its cap before parsing it', async () => {
    const h = await start();
    const big = JSON.stringify({ token: 'x'.repeat(10_000) });
    const res = await fetch(`${h.url}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(res.status).toBe(413);
  });

  it('does not inflate a 241-byte detail blob that would be 300 MiB: the run shows without detail', async () => {
    const h = await start();
    const bomb = await brotliBomb();
    expect(bomb.length).toBeLessThan(1024);
    const tmp = join(h.dir, 'bomb.tmp');
    writeFileSync(tmp, bomb);
    const sha = createHash('sha256').update(bomb).digest('hex');
    await new FileBlobs(join(h.dir, 'blobs')).adopt(sha, tmp);
    const base = await h.hub.store.getRun(h.runId);
    if (!base) throw new Error('the fixture run is missing');
    const runId = '01JZZZZZZZZZZZZZZZZZZZZZZZ';
    await h.hub.store.commit({ runs: [{ ...base, runId, detailBlob: sha }] });
    const v = await addTestUser(h.hub.store, 'vera', ['viewer']);
    const res = await fetch(`${h.url}/api/runs/${runId}`, { headers: v });
    expect(res.status).toBe(200);
    expect(RunDetailSchema.parse(await res.json()).detailAvailable).toBe(false);
    expect(h.logs.join('')).toContain('does not inflate within 67108864 bytes');
  });
});
