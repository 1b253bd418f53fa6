import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliBomb } from '@driftline/hop/testing';
import type { UrlStorage } from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';

const MiB = 1024 * 1024;
let bomb: Buffer;
let server: Server;
let url: string;

/** A hostile relay: every answer is a few hundred bytes of brotli that fetch inflates to 300 MiB. */
beforeAll(async () => {
  bomb = brotliBomb(); // 481 bytes that inflate to 300 MiB (made once: @driftline/hop/testing)
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(req.method === 'POST' ? 500 : 200, {
      'content-encoding': 'br',
      'content-type': 'application/vnd.driftline.batch',
      'driftline-cursor': '1',
    });
    res.end(bomb);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const uplink = () =>
  new HttpUplink({ url, token: 't', urlStorage: {} as UrlStorage, maxResponseBytes: 4 * MiB });

describe('HttpUplink reads what a relay answers with an inflate cap', () => {
  it('refuses a downlink page that inflates past the cap, as a retryable failure', async () => {
    expect(bomb.length).toBeLessThan(1024);
    const r = await uplink().pullDownlink('ship-7', undefined);
    expect(r).toMatchObject({ ok: false, retryable: true });
    expect(!r.ok && r.error).toContain('over 4194304 bytes once inflated');
  });

  it('reads at most a small part of a bombed error body', async () => {
    const before = process.memoryUsage().arrayBuffers;
    const r = await uplink().postBundles(new Uint8Array([0x44, 0x4c, 0x54, 1]));
    expect(r).toMatchObject({ ok: false, status: 500 });
    expect(!r.ok && r.error).toContain('error body not read: the response is over 65536 bytes once inflated');
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * MiB);
  });
});
