import { afterEach, describe, expect, it } from 'vitest';
import { type LinkHandle, startLink } from '../src/index.js';
import { echoServer, open, readBytes } from './netHelpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<LinkHandle> {
  const echo = await echoServer();
  cleanups.push(echo.close);
  const link = await startLink({
    name: 'ship-7',
    profile: 'geo',
    timeScale: 10,
    target: { port: echo.port },
  });
  cleanups.push(link.close);
  return link;
}

async function call(link: LinkHandle, method: string, path: string, body?: unknown) {
  const res = await fetch(`${link.control.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers field by field
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe('link control API', () => {
  it('reads the link: name, addresses, settings and state', async () => {
    const link = await setup();
    const r = await call(link, 'GET', '/link');
    expect(r.status).toBe(200);
    expect(r.body.name).toBe('ship-7');
    expect(r.body.listen).toBe(`127.0.0.1:${link.port}`);
    expect(r.body.settings.uplink.delayMs).toBe(30);
    expect(r.body.state).toEqual({ up: true, forced: null, msUntilChange: null });
  });

  it('changes a running link with PATCH (merge) and PUT (replace)', async () => {
    const link = await setup();
    const p = await call(link, 'PATCH', '/link', { downlink: { delayMs: 5 }, whenDown: 'hang' });
    expect(p.status).toBe(200);
    expect(link.control.settings().downlink.delayMs).toBe(5);
    expect(link.control.settings().uplink.delayMs).toBe(30);
    expect(link.control.settings().whenDown).toBe('hang');
    const u = await call(link, 'PUT', '/link', { uplink: { delayMs: 1 } });
    expect(u.status).toBe(200);
    expect(link.control.settings().downlink.delayMs).toBe(0);
    expect(link.control.settings().whenDown).toBe('refuse');
  });

  it('answers 400 bad-request naming the field, and keeps the settings it had', async () => {
    const link = await setup();
    const before = link.control.settings();
    const r = await call(link, 'PATCH', '/link', { uplink: { bandwidthBps: 'fast' } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('bad-request');
    expect(r.body.error.message).toMatch(/uplink\.bandwidthBps/);
    expect(link.control.settings()).toEqual(before);
    const bad = await call(link, 'PUT', '/link', '{not json');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/not JSON/);
  });

  it('forces the link down and up, and back to its schedule', async () => {
    const link = await setup();
    expect((await call(link, 'POST', '/link/down')).body.state).toMatchObject({ up: false, forced: 'down' });
    await expect(open(link.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect((await call(link, 'POST', '/link/up')).body.state).toMatchObject({ up: true, forced: 'up' });
    expect((await call(link, 'POST', '/link/auto')).body.state).toMatchObject({ up: true, forced: null });
    expect(link.stats().transitions).toBe(2);
  });

  it('serves counters', async () => {
    const link = await setup();
    const s = await open(link.port);
    s.write('x');
    await readBytes(s, 1);
    s.destroy();
    const r = await call(link, 'GET', '/link/stats');
    expect(r.status).toBe(200);
    expect(r.body.connections.total).toBe(1);
    expect(r.body.uplink.bytes).toBe(1);
    expect(r.body).toHaveProperty('downlink.droppedBytes');
  });

  it('answers 404 and 405 from the error table', async () => {
    const link = await setup();
    const nf = await call(link, 'GET', '/nope');
    expect(nf.status).toBe(404);
    expect(nf.body.error.code).toBe('not-found');
    const na = await call(link, 'DELETE', '/link');
    expect(na.status).toBe(405);
    expect(na.body.error.code).toBe('method-not-allowed');
  });
});
