import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BATCH_CONTENT_TYPE, WireError } from '@driftline/protocol';
import { until } from '@driftline/protocol/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createHopServer,
  type HopServer,
  type HopServerOptions,
  MemoryHopBackend,
  RetryLaterError,
} from '../src/index.js';
import { brotliBomb } from '../src/testing.js';

const TOKEN = 'token-7';
const OTHER = 'token-8';
const MiB = 1024 * 1024;
const servers: HopServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(over: Partial<HopServerOptions> = {}) {
  const backend = new MemoryHopBackend({ name: 'terminal' });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  backend.addToken(OTHER, { name: 'ship-8', sites: ['ship-8'] });
  const hop = createHopServer(backend, {
    uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-hostile-')), maxSize: 10 * MiB },
    maxBatchBytes: 64 * 1024,
    ...over,
  });
  servers.push(hop);
  const { port, url } = await hop.listen();
  return { backend, hop, port, url };
}

/** A raw client: sends `head`, then streams zeros up to `max` bytes; resolves how it ended. */
function stream(port: number, head: string, max: number) {
  return new Promise<{ response: string; sent: number; closedByServer: boolean }>((resolve) => {
    const s = connect(port, '127.0.0.1');
    let response = '';
    let sent = 0;
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      s.destroy();
      resolve({ response, sent, closedByServer });
    };
    s.on('data', (d) => {
      response += d.toString('latin1');
    });
    s.on('error', () => finish(true));
    s.on('close', () => finish(true));
    s.on('end', () => finish(true));
    s.write(head);
    const chunk = Buffer.alloc(64 * 1024);
    const pump = () => {
      while (!done && sent < max) {
        sent += chunk.length;
        if (!s.write(chunk)) {
          s.once('drain', pump);
          return;
        }
      }
      // Everything written and the server still reads: it drained the refused body.
      if (!done) setTimeout(() => finish(false), 200);
    };
    pump();
  });
}

const GiB = `${1024 ** 3}`;

describe('refused requests do not make the server read their bodies', () => {
  const cases: [string, (port: number) => string, number][] = [
    [
      '401 without a token',
      () =>
        `POST /v1/bundles HTTP/1.1\r\nHost: x\r\nContent-Type: ${BATCH_CONTENT_TYPE}\r\nContent-Length: ${GiB}\r\n\r\n`,
      401,
    ],
    [
      '413 over the batch limit',
      () =>
        `POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: ${BATCH_CONTENT_TYPE}\r\nContent-Length: ${GiB}\r\n\r\n`,
      413,
    ],
    [
      '415 for a wrong content type',
      () =>
        `POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: text/plain\r\nContent-Length: ${GiB}\r\n\r\n`,
      415,
    ],
    [
      '401 on a tus creation with an upload',
      () =>
        `POST /v1/uploads/ HTTP/1.1\r\nHost: x\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 5\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${GiB}\r\n\r\n`,
      401,
    ],
  ];
  for (const [name, head, status] of cases) {
    it(`closes the connection after the ${name}`, async () => {
      const { port } = await start();
      const r = await stream(port, head(port), 256 * MiB);
      expect(r.response).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(r.response.toLowerCase()).toContain('connection: close');
      expect(r.closedByServer).toBe(true);
      expect(r.sent).toBeLessThan(256 * MiB);
    });
  }

  it('lets a client that reads late still read the refusal: the socket lingers half-closed, not reset', async () => {
    const { port } = await start();
    const r = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1');
      let got = '';
      s.pause(); // a busy client: it writes its upload and reads nothing for a while
      s.on('data', (d) => {
        got += d.toString('latin1');
      });
      s.on('error', () => resolve(got));
      s.on('close', () => resolve(got));
      s.write(
        `POST /v1/bundles HTTP/1.1\r\nHost: x\r\nContent-Type: ${BATCH_CONTENT_TYPE}\r\nContent-Length: ${GiB}\r\n\r\n`,
      );
      s.write(Buffer.alloc(4 * MiB));
      setTimeout(() => s.resume(), 500);
    });
    expect(r).toMatch(/^HTTP\/1.1 401 /);
  });

  it('keeps a well-behaved keep-alive connection open after a 404 without a body', async () => {
    const { port } = await start();
    const r = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1');
      let got = '';
      s.on('data', (d) => {
        got += d;
        if (got.split('HTTP/1.1').length === 3) {
          s.destroy();
          resolve(got);
        }
      });
      s.write('GET /nope HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(r.match(/HTTP\/1.1 404/g)).toHaveLength(2);
  });
});

describe('connections per client address', () => {
  it('answers the connection past the cap with 429, Retry-After and a code, and serves again once one closes', async () => {
    const { port, url } = await start({ maxConnectionsPerClient: 3 });
    const open: Socket[] = [];
    for (let i = 0; i < 3; i++) {
      const s = connect(port, '127.0.0.1');
      await new Promise((r) => s.once('connect', r));
      open.push(s);
    }
    const refused = await stream(port, 'GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n', 0);
    expect(refused.response).toMatch(/^HTTP\/1.1 429 /);
    expect(refused.response.toLowerCase()).toMatch(/retry-after: \d+/);
    expect(JSON.parse(refused.response.split('\r\n\r\n')[1] ?? '').error.code).toBe('too-many-requests');
    expect(refused.closedByServer).toBe(true);
    for (const s of open) s.destroy();
    // the server counts the closed sockets off once it sees them close: asked again until it serves
    await until(
      async () => (await fetch(`${url}/v1/health`)).status === 200,
      'a 200 once the sockets closed (the per-client cap never freed)',
    );
    const m = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(Number(/driftline_hop_connections_refused_total (\d+)/.exec(m)?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('answers headers that never finish with 408 and a code, and closes', async () => {
    const { port } = await start({ headersTimeoutMs: 200 });
    const r = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1');
      let got = '';
      const t = setInterval(() => s.write('X-Slow: 1\r\n'), 20);
      s.on('data', (d) => {
        got += d;
      });
      s.on('close', () => {
        clearInterval(t);
        resolve(got);
      });
      s.on('error', () => {});
      s.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n');
    });
    expect(r).toMatch(/^HTTP\/1.1 408 /);
    expect(JSON.parse(r.split('\r\n\r\n')[1] ?? '').error.code).toBe('request-timeout');
  });
});

describe('challenges and retry hints', () => {
  it('names the Bearer scheme on every 401, hop routes and tus alike', async () => {
    const { url } = await start();
    for (const [path, init] of [
      ['/v1/bundles?for=ship-7', {}],
      [`/v1/blobs/${'a'.repeat(64)}`, {}],
      ['/v1/uploads/', { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '5' } }],
      ['/metrics', {}],
    ] as const) {
      const r = await fetch(`${url}${path}`, init);
      expect(r.status, path).toBe(401);
      expect(r.headers.get('www-authenticate'), path).toBe('Bearer realm="driftline"');
      expect((await r.json()).error.code).toBe('unauthorized');
    }
  });

  it('says when to retry on 429 and 503', async () => {
    const { backend, url } = await start();
    backend.failWith = new RetryLaterError('too-many-requests', 'quota', 17);
    const r = await fetch(`${url}/v1/bundles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': BATCH_CONTENT_TYPE },
      body: new Uint8Array([0x44, 0x4c, 0x54, 1, 0, 0, 0, 0]),
    });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('17');
    backend.ready = false;
    const h = await fetch(`${url}/v1/health`);
    expect(h.status).toBe(503);
    expect(Number(h.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('/metrics access', () => {
  it('needs a peer token by default', async () => {
    const { url } = await start();
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('driftline_hop_requests_total');
  });

  it('is open with metrics.public and follows a custom authorize', async () => {
    const open = await start({ metrics: { public: true } });
    expect((await fetch(`${open.url}/metrics`)).status).toBe(200);
    const custom = await start({
      metrics: {
        authorize: async (ctx) => {
          if (ctx.get('authorization') !== 'Bearer prom') throw new WireError('forbidden', 'not prometheus');
        },
      },
    });
    expect((await fetch(`${custom.url}/metrics`, { headers: { authorization: 'Bearer prom' } })).status).toBe(
      200,
    );
    expect(
      (await fetch(`${custom.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(403);
  });
});

describe('inflate caps on request bodies', () => {
  const post = (url: string, body: Uint8Array, encoding: string) =>
    fetch(`${url}/v1/bundles`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': BATCH_CONTENT_TYPE,
        'content-encoding': encoding,
      },
      body: body as BodyInit,
    });

  it('refuses a 481-byte brotli bomb that inflates to 300 MiB with 413', async () => {
    const { url, backend } = await start();
    const bomb = brotliBomb();
    expect(bomb.length).toBeLessThan(1024);
    const r = await post(url, bomb, 'br');
    expect(r.status).toBe(413);
    expect((await r.json()).error.code).toBe('payload-too-large');
    expect(backend.stored.size).toBe(0);
  });

  it('refuses an endless chunked gzip body that inflates to nothing with 413', async () => {
    const { port } = await start();
    const empty = gzipSync(Buffer.alloc(0));
    const members = Buffer.concat(Array.from({ length: 10_000 }, () => empty)); // 200 kB, 0 bytes inflated
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/v1/bundles',
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'content-type': BATCH_CONTENT_TYPE,
            'content-encoding': 'gzip',
            'transfer-encoding': 'chunked',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write(members.subarray(i * 20_000, (i + 1) * 20_000));
      req.end();
    });
    expect(status).toBe(413);
  });
});
