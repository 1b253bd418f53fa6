import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliBomb } from '@driftline/hop/testing';
import { CURSOR_HEADER } from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpUpstream } from '../src/adapters/http/HttpUpstream.js';
import { makeBundle } from './helpers.js';

const MiB = 1024 * 1024;
let bomb: Buffer;
let server: Server;
let url: string;

/** A hostile upstream: every answer is a few hundred bytes of brotli that inflate to 300 MiB. */
beforeAll(async () => {
  bomb = brotliBomb(); // 481 bytes that inflate to 300 MiB (made once: @driftline/hop/testing)
  server = createServer((req, res) => {
    const raw = req.url?.includes('raw=1');
    const status = req.url?.includes('fail=1') || req.method === 'POST' ? 500 : 200;
    res.writeHead(status, {
      ...(raw ? {} : { 'content-encoding': 'br' }),
      'content-type': status === 200 ? 'application/vnd.driftline.batch' : 'application/json',
      [CURSOR_HEADER]: '1',
    });
    req.resume();
    res.end(bomb);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('responses from a hostile upstream are read with an inflate cap', () => {
  it('refuses a downlink page that fetch inflates past maxResponseBytes', async () => {
    expect(bomb.length).toBeLessThan(1024);
    const up = new HttpUpstream('evil', url, 't', 30_000, 4 * MiB);
    const r = await up.pullDownlink('ship-7', undefined, 10);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain('maxResponseBytes');
  });

  it('refuses a raw brotli downlink body that would inflate past the cap', async () => {
    const up = new HttpUpstream('evil', `${url}/raw=1`, 't', 30_000, 4 * MiB);
    const r = await up.pullDownlink('ship-7', undefined, 10);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(
      /unreadable: the response is over 4194304 bytes once inflated; refused/,
    );
  });

  it('reads no more than a small error body, and survives a bombed answer to a post', async () => {
    const before = process.memoryUsage().arrayBuffers;
    const up = new HttpUpstream('evil', url, 't', 30_000, 4 * MiB);
    const r = await up.postBatch([(await makeBundle()).bytes]);
    expect(r).toMatchObject({ ok: false, status: 500 });
    expect(!r.ok && r.message).toContain(
      'error body not read: the response is over 65536 bytes once inflated',
    );
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * MiB);
  });
});
