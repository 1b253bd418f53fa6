import { afterEach, describe, expect, it } from 'vitest';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

/**
 * Who may change waivers and drift acknowledgements, and what they refuse (decision 421): reads are for
 * viewers, changes for operators; bodies are capped and schema-checked; a refusal names what is wrong and
 * nothing is stored.
 */
const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

describe('/api/waivers and /api/drift against hostile callers', () => {
  it('answers 401 without a credential, 403 to a viewer, 4xx with a code to bad bodies, and stores nothing', async () => {
    const h = await startHub();
    hubs.push(h);
    const viewer = (await addTestUser(h.hub.store, 'wall', ['viewer'])).authorization;
    const operator = (await addTestUser(h.hub.store, 'ops', ['operator'])).authorization;
    const post = (body: string, authorization?: string) =>
      fetch(`${h.url}/api/waivers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body,
      });
    const good = JSON.stringify({ pattern: 'aws_*', expires: '2h', reason: 'noise' });
    expect((await post(good)).status).toBe(401);
    expect((await post(good, viewer)).status).toBe(403);
    const bad = [
      '{"pattern":"aws_*"',
      JSON.stringify({ pattern: '', expires: '2h', reason: 'x' }),
      JSON.stringify({ pattern: 'x', expires: 'whenever', reason: 'x' }),
      JSON.stringify({ pattern: 'x', expires: '9999d', reason: 'x' }),
      JSON.stringify({ pattern: 'x'.repeat(5000), expires: '2h', reason: 'x' }),
      JSON.stringify({ pattern: 'x', expires: '2h', reason: 'x', sites: Array(500).fill('s') }),
      JSON.stringify({ pattern: 'x', expires: '2h', reason: 'x'.repeat(1_000_000) }),
    ];
    for (const body of bad) {
      const r = await post(body, operator);
      expect(r.status, body.slice(0, 60)).toBeGreaterThanOrEqual(400);
      expect(r.status, body.slice(0, 60)).toBeLessThan(500);
      expect(((await r.json()) as { error: { code: string } }).error.code).toMatch(/^[a-z-]+$/);
    }
    const list = await fetch(`${h.url}/api/waivers`, { headers: { authorization: viewer } });
    expect(((await list.json()) as { waivers: unknown[] }).waivers).toEqual([]);
    const del = await fetch(`${h.url}/api/waivers/nope`, {
      method: 'DELETE',
      headers: { authorization: viewer },
    });
    expect(del.status).toBe(403);
    const ack = await fetch(`${h.url}/api/drift/nope/ack`, {
      method: 'POST',
      headers: { authorization: viewer },
    });
    expect(ack.status).toBe(403);
    const huge = await fetch(`${h.url}/api/drift?limit=100000`, { headers: { authorization: viewer } });
    expect(huge.status).toBe(400);
  });

  it('bounds and checks the paged fleet reads: /api/sites and /api/matrix windows', async () => {
    const h = await startHub();
    hubs.push(h);
    const viewer = (await addTestUser(h.hub.store, 'wall', ['viewer'])).authorization;
    const get = (path: string, authorization?: string) =>
      fetch(`${h.url}${path}`, { headers: authorization ? { authorization } : {} });
    expect((await get('/api/sites?limit=10')).status).toBe(401);
    for (const q of ['limit=100000', 'limit=-1', 'sort=drop%20table', `contains=${'x'.repeat(5000)}`])
      expect((await get(`/api/sites?${q}`, viewer)).status, q).toBe(400);
    // A cursor that is not one of ours starts at the beginning, never errors or reads past the page.
    const r = await get('/api/sites?cursor=%27%3B--&limit=5', viewer);
    expect(r.status).toBe(200);
    for (const q of ['limit=100000', `sites=${Array(2000).fill('s').join(',')}`, 'cursor=%00%00'])
      expect((await get(`/api/matrix?${q}`, viewer)).status, q.slice(0, 30)).toBeLessThan(500);
    expect((await get('/api/matrix?limit=100000', viewer)).status).toBe(400);
  });
});
