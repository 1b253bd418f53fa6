import { MemoryHopBackend } from '@driftline/hop';
import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiServer } from '../src/adapters/http/apiServer.js';
import { storePath } from '../src/app.js';
import { postJson, startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const h of hubs.splice(0)) await h.close();
});
const start = async (extra: object = {}) => {
  const h = await startHub(extra);
  hubs.push(h);
  return h;
};
const CHALLENGE = 'Bearer realm="driftline"';
const SPLIT = { listen: { hop: { host: '127.0.0.1', port: 0 }, api: { host: '127.0.0.1', port: 0 } } };

describe('every 401 names its scheme', () => {
  it('on /api, /metrics, the hop routes and tus, on one listener and on two', async () => {
    for (const extra of [{}, SPLIT]) {
      const h = await start(extra);
      const wrong = { authorization: 'Bearer not-a-token' };
      const tus = { 'tus-resumable': '1.0.0' };
      const asks: [string, RequestInit][] = [
        [`${h.url}/api/matrix`, {}],
        [`${h.url}/api/matrix`, { headers: wrong }],
        [`${h.url}/api/matrix`, { method: 'HEAD' }],
        [`${h.url}/api/events`, {}],
        [`${h.url}/api/session`, {}],
        [`${h.url}/api/plan-requests`, { method: 'POST', body: '{}' }],
        [`${h.url}/metrics`, {}],
        [`${h.url}/metrics`, { headers: wrong }],
        [`${h.hopUrl}/v1/bundles?for=ship-7`, {}],
        [`${h.hopUrl}/v1/bundles?for=ship-7`, { headers: wrong }],
        [`${h.hopUrl}/v1/bundles`, { method: 'POST', body: 'x' }],
        [`${h.hopUrl}/v1/blobs/${'0'.repeat(64)}`, {}],
        [`${h.hopUrl}/v1/uploads`, { method: 'POST', headers: { ...tus, 'upload-length': '1' } }],
        [`${h.hopUrl}/v1/uploads/abc`, { method: 'HEAD', headers: tus }],
        [`${h.hopUrl}/v1/uploads/abc`, { method: 'PATCH', headers: { ...tus, ...wrong }, body: 'x' }],
      ];
      for (const [url, init] of asks) {
        const res = await fetch(url, init);
        const what = `${init.method ?? 'GET'} ${url.replace(/^http:\/\/[^/]+/, '')}`;
        expect(res.status, what).toBe(401);
        expect(res.headers.get('www-authenticate'), what).toBe(CHALLENGE);
        await res.body?.cancel();
      }
    }
  });
});

describe('every 429 and 503 says when to retry', () => {
  it('answers 429 past the rate limit with Retry-After', async () => {
    const h = await start({ api: { rateLimit: { perMinute: 2, failuresPerMinute: 2 } } });
    const v = await addTestUser(h.hub.store, 'vera', ['viewer']);
    const statuses: number[] = [];
    let last: Response | null = null;
    for (let i = 0; i < 3; i++) {
      last = await fetch(`${h.url}/api/sites`, { headers: v });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers 503 with Retry-After while another process holds the store’s write lock', async () => {
    const h = await start();
    const op = await addTestUser(h.hub.store, 'otto', ['operator', 'viewer']);
    const other = new Database(storePath(h.dir));
    other.exec('BEGIN IMMEDIATE');
    closers.push(() => {
      other.exec('ROLLBACK');
      other.close();
    });
    // Signing in writes a session: it waits for the lock past the store's busy timeout, then gives up.
    const res = await postJson(`${h.url}/api/session`, { token: op.token });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('unavailable');
    expect(body.error.message).toContain('retry');
    // Reads go on meanwhile (WAL).
    expect((await fetch(`${h.url}/api/sites`, { headers: op })).status).toBe(200);
  }, 60_000);

  it('answers /v1/health with 503 and Retry-After when the hub is not ready, on the api listener too', async () => {
    const backend = new MemoryHopBackend({ role: 'hub' });
    backend.health = async () => ({ ok: false, detail: 'migrating the store' });
    const api = createApiServer(backend, pino({ level: 'silent' }), () => {});
    const { url } = await api.listen(0);
    closers.push(() => api.close());
    const res = await fetch(`${url}/v1/health`);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toMatchObject({ ok: false, detail: 'migrating the store' });
    const head = await fetch(`${url}/v1/health`, { method: 'HEAD' });
    expect([head.status, head.headers.has('retry-after')]).toEqual([503, true]);
  });
});
