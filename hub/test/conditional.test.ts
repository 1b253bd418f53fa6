import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PLAN, postJson, startHub, type TestHub } from './hubFixture.js';
import { type RouteOp, routerOps } from './routes.js';
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

/** A hub with a built dashboard, a plan request, a publication, a plan of a ref and an admin. */
async function seeded(extra: object = {}) {
  const h = await start(extra);
  const ui = join(h.dir, 'no-ui');
  mkdirSync(join(ui, 'assets'), { recursive: true });
  writeFileSync(join(ui, 'index.html'), '<!doctype html><title>Driftline</title>');
  writeFileSync(join(ui, 'assets', 'app.js'), 'console.log("dashboard")');
  // Identity: these tests are about validators of the bytes; compressed answers are tested below.
  const admin = {
    authorization: (await addTestUser(h.hub.store, 'ada', ['admin'])).authorization,
    'accept-encoding': 'identity',
  };
  const req = (await (await postJson(`${h.url}/api/plan-requests`, PLAN, admin)).json()) as {
    requestId: string;
  };
  const pub = await fetch(`${h.url}/api/publications?site=ship-7&name=n.txt`, {
    method: 'POST',
    headers: admin,
    body: 'x',
  });
  const { publicationId } = (await pub.json()) as { publicationId: string };
  // A plan of ref pr/1 at commit aaaa…, so the ref gate answers 200.
  const commit = 'a'.repeat(40);
  const cell = (await h.hub.store.getCell('ship-7', 'prod', 'net'))!;
  await h.hub.store.commit({ cells: [{ ...cell, ref: 'pr/1', atRef: 'pr/1', commit }] });
  const queries: Record<string, string> = {
    '/api/refs/:ref/status': `?commit=${commit}`,
    '/api/approvals': '?site=ship-7',
  };
  const values: Record<string, string> = {
    ref: 'pr%2F1',
    site: 'ship-7',
    environment: 'prod',
    component: 'net',
    runId: h.runId,
    requestId: req.requestId,
    publicationId,
    bundleId: publicationId,
  };
  const urlOf = (r: RouteOp) =>
    r.path.replace(/:(\w+)/g, (_, p: string) => values[p] ?? p) + (queries[r.path] ?? '');
  return { h, admin, urlOf };
}

/** GET routes answered from memory: the event stream and the hop API's own routes are checked apart. */
const peopleGets = (ops: RouteOp[]) =>
  ops.filter((r) => r.method === 'GET' && !r.path.startsWith('/v1/') && r.path !== '/api/events');

describe('HEAD', () => {
  it('answers every GET route of the people’s side as GET does: 200, Content-Length, ETag, no body', async () => {
    for (const extra of [
      {},
      { listen: { hop: { host: '127.0.0.1', port: 0 }, api: { host: '127.0.0.1', port: 0 } } },
    ]) {
      const { h, admin, urlOf } = await seeded(extra);
      const app = h.hub.api?.app ?? h.hub.hop.app;
      const paths = [...peopleGets(routerOps(app)).map(urlOf), '/assets/app.js', '/runs/01HZZZ'];
      expect(paths).toContain('/api/matrix');
      for (const path of paths) {
        const get = await fetch(`${h.url}${path}`, { headers: admin });
        const bytes = (await get.arrayBuffer()).byteLength;
        const head = await fetch(`${h.url}${path}`, { method: 'HEAD', headers: admin });
        expect([get.status, head.status], path).toEqual([200, 200]);
        expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'));
        // A scrape counts the request before it: a fresh reading each time, with no validator.
        if (path === '/metrics') continue;
        expect(head.headers.get('content-length'), path).toBe(String(bytes));
        expect(get.headers.get('etag'), path).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
        expect(head.headers.get('etag'), path).toBe(get.headers.get('etag'));
      }
    }
  });

  it('answers HEAD of the event stream with its headers and closes', async () => {
    const { h, admin } = await seeded();
    const head = await fetch(`${h.url}/api/events`, { method: 'HEAD', headers: admin });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/event-stream');
    expect(h.hub.events.listening).toBe(false);
  });

  it('answers HEAD of the hop API’s reads as GET does', async () => {
    const { h } = await seeded();
    for (const path of ['/v1/health']) {
      const get = await fetch(`${h.hopUrl}${path}`);
      const bytes = (await get.arrayBuffer()).byteLength;
      const head = await fetch(`${h.hopUrl}${path}`, { method: 'HEAD' });
      expect([get.status, head.status], path).toEqual([200, 200]);
      expect(head.headers.get('content-length'), path).toBe(String(bytes));
    }
  });
});

describe('ETags on /api reads', () => {
  it('answers 304 with no body to If-None-Match of the current tag, and 200 once the data changed', async () => {
    const { h, admin } = await seeded();
    const first = await fetch(`${h.url}/api/plan-requests`, { headers: admin });
    const tag = first.headers.get('etag') as string;
    expect(tag).toMatch(/^"/); // strong: no W/
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    for (const inm of [tag, `"other", ${tag}`, `W/${tag}`, '*']) {
      const again = await fetch(`${h.url}/api/plan-requests`, {
        headers: { ...admin, 'if-none-match': inm },
      });
      expect(again.status, inm).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(tag);
    }
    const head = await fetch(`${h.url}/api/plan-requests`, {
      method: 'HEAD',
      headers: { ...admin, 'if-none-match': tag },
    });
    expect(head.status).toBe(304);
    await postJson(`${h.url}/api/plan-requests`, PLAN, admin);
    const changed = await fetch(`${h.url}/api/plan-requests`, {
      headers: { ...admin, 'if-none-match': tag },
    });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
    expect(((await changed.json()) as { requests: unknown[] }).requests).toHaveLength(2);
  });

  it('gives the same bytes the same tag and answers a stale If-None-Match in full', async () => {
    const { h, admin } = await seeded();
    const a = await fetch(`${h.url}/api/sites/ship-7`, { headers: admin });
    const b = await fetch(`${h.url}/api/sites/ship-7`, { headers: { ...admin, 'if-none-match': '"stale"' } });
    expect(b.status).toBe(200);
    expect(await b.text()).toBe(await a.text());
    expect(b.headers.get('etag')).toBe(a.headers.get('etag'));
  });
});

describe('compressed answers', () => {
  it('sends br or gzip as the client takes them, with a weak tag that revalidates to 304', async () => {
    const { h, admin } = await seeded();
    // Enough sites for an answer past the compression threshold.
    for (let i = 0; i < 40; i++)
      await h.hub.store.commit({
        sites: [{ site: `site-${i}`, lastContactAt: 1, upstream: 'relay-1', unreachableNotifiedFor: null }],
      });
    const get = (encoding: string, extra: Record<string, string> = {}) =>
      fetch(`${h.url}/api/fleet`, { headers: { ...admin, 'accept-encoding': encoding, ...extra } });
    const plain = await get('identity');
    const plainText = await plain.text();
    expect(plain.headers.get('content-encoding')).toBeNull();
    for (const [accept, coding] of [
      ['br, gzip', 'br'],
      ['gzip', 'gzip'],
    ] as const) {
      const res = await get(accept);
      expect(res.headers.get('content-encoding'), accept).toBe(coding);
      expect(res.headers.get('vary')).toMatch(/accept-encoding/i);
      const tag = res.headers.get('etag') as string;
      expect(tag).toBe(`W/${plain.headers.get('etag')}`);
      // fetch decodes: the same JSON as the identity answer.
      expect(await res.text()).toBe(plainText);
      const again = await get(accept, { 'if-none-match': tag });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(tag);
    }
    // On the wire: smaller than the identity bytes.
    const { request } = await import('node:http');
    const wire = await new Promise<number>((resolve, reject) => {
      const req = request(`${h.url}/api/fleet`, { headers: { ...admin, 'accept-encoding': 'br' } }, (res) => {
        let n = 0;
        res.on('data', (d: Buffer) => {
          n += d.length;
        });
        res.on('end', () => resolve(n));
      });
      req.on('error', reject);
      req.end();
    });
    expect(wire).toBeLessThan(Buffer.byteLength(plainText) / 3);
  });

  it('never compresses the event stream', async () => {
    const { h, admin } = await seeded();
    const ctl = new AbortController();
    const res = await fetch(`${h.url}/api/events`, {
      headers: { ...admin, 'accept-encoding': 'br, gzip' },
      signal: ctl.signal,
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('content-encoding')).toBeNull();
    ctl.abort();
  });
});
