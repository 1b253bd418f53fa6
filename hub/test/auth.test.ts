import { AuditResponseSchema, SessionSchema } from '@driftline/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JSON_BODY_DEADLINE_MS } from '../src/adapters/http/json.js';
import { revokeUser } from '../src/core/users.js';
import { PLAN, postJson, startHub, type TestHub } from './hubFixture.js';
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

const code = async (res: Response) =>
  ((await res.json()) as { error: { code: string; message: string } }).error;
const cookieOf = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0] as string;

describe('who may use the hub API', () => {
  it('refuses unauthenticated plan requests and publications with 401 and stores nothing', async () => {
    const h = await start();
    const plan = await postJson(`${h.url}/api/plan-requests`, PLAN);
    expect(plan.status).toBe(401);
    expect(plan.headers.get('www-authenticate')).toBe('Bearer realm="driftline"');
    expect((await code(plan)).code).toBe('unauthorized');
    const pub = await fetch(`${h.url}/api/publications?site=ship-7&name=evil`, { method: 'POST', body: 'x' });
    expect(pub.status).toBe(401);
    expect(await h.hub.store.listPlanRequests()).toEqual([]);
    expect(await h.hub.publications.listPublications()).toEqual([]);
  });

  it('refuses every read without a credential, however the path is spelt', async () => {
    const h = await start();
    for (const path of [
      '/api/matrix',
      '/API/matrix',
      '/api//sites/',
      '/api/%6datrix',
      '/api/events',
      '/metrics',
    ]) {
      const res = await fetch(`${h.url}${path}`);
      expect(res.status, path).toBe(401);
    }
    expect((await fetch(`${h.url}/v1/health`)).status).toBe(200);
    expect((await fetch(`${h.url}/`)).status).toBe(200);
  });

  it('lets a viewer read but not publish, and names the role it lacks', async () => {
    const h = await start();
    const viewer = await addTestUser(h.hub.store, 'vera', ['viewer']);
    expect((await fetch(`${h.url}/api/matrix`, { headers: viewer })).status).toBe(200);
    expect((await fetch(`${h.url}/metrics`, { headers: viewer })).status).toBe(200);
    const pub = await fetch(`${h.url}/api/publications?site=ship-7&name=x`, {
      method: 'POST',
      headers: viewer,
      body: 'x',
    });
    expect(pub.status).toBe(403);
    const e = await code(pub);
    expect(e.code).toBe('forbidden');
    expect(e.message).toContain('publisher');
    expect(await h.hub.publications.listPublications()).toEqual([]);
    expect((await postJson(`${h.url}/api/plan-requests`, PLAN, viewer)).status).toBe(403);
  });

  it('lets an operator ask for a plan', async () => {
    const h = await start();
    const op = await addTestUser(h.hub.store, 'otto', ['operator']);
    const res = await postJson(`${h.url}/api/plan-requests`, PLAN, op);
    expect(res.status).toBe(201);
    expect(await h.hub.store.listPlanRequests()).toHaveLength(1);
  });

  it('refuses a revoked token at once', async () => {
    const h = await start();
    const op = await addTestUser(h.hub.store, 'otto', ['operator']);
    expect((await fetch(`${h.url}/api/sites`, { headers: op })).status).toBe(200);
    await revokeUser(h.hub.store, 'otto', Date.now());
    expect((await fetch(`${h.url}/api/sites`, { headers: op })).status).toBe(401);
    expect((await postJson(`${h.url}/api/plan-requests`, PLAN, op)).status).toBe(401);
  });

  it('believes the SSO header only from a configured proxy address, never from X-Forwarded-For', async () => {
    const elsewhere = await start({ api: { sso: { header: 'X-Forwarded-User', proxies: ['10.0.0.0/8'] } } });
    await addTestUser(elsewhere.hub.store, 'sso-ada', ['admin']);
    const spoofed = await fetch(`${elsewhere.url}/api/matrix`, {
      headers: { 'x-forwarded-user': 'sso-ada', 'x-forwarded-for': '10.0.0.5' },
    });
    expect(spoofed.status).toBe(401);

    const proxied = await start({
      api: { sso: { header: 'X-Forwarded-User', proxies: ['127.0.0.1/32'], defaultRole: 'viewer' } },
    });
    await addTestUser(proxied.hub.store, 'sso-ada', ['operator']);
    const ada = { 'x-forwarded-user': 'sso-ada' };
    const me = SessionSchema.parse(
      await (await fetch(`${proxied.url}/api/session`, { headers: ada })).json(),
    );
    expect(me).toMatchObject({ user: 'sso-ada', roles: ['operator'], via: 'sso' });
    // The proxy's cookie rides along with cross-site requests too: a write needs the CSRF value.
    const forged = await postJson(`${proxied.url}/api/plan-requests`, PLAN, ada);
    expect([forged.status, (await code(forged)).code]).toEqual([403, 'csrf']);
    expect(me.csrf).not.toBe('');
    expect(
      (await postJson(`${proxied.url}/api/plan-requests`, PLAN, { ...ada, 'x-driftline-csrf': me.csrf }))
        .status,
    ).toBe(201);
    const stranger = { 'x-forwarded-user': 'bob@example.org' };
    expect((await fetch(`${proxied.url}/api/matrix`, { headers: stranger })).status).toBe(200);
    expect((await postJson(`${proxied.url}/api/plan-requests`, PLAN, stranger)).status).toBe(403);
  });

  it('keeps a cookie session that reads, and writes only with the CSRF header', async () => {
    const h = await start();
    const op = await addTestUser(h.hub.store, 'otto', ['operator']);
    expect((await postJson(`${h.url}/api/session`, { token: 'wrong' })).status).toBe(401);
    const signIn = await postJson(`${h.url}/api/session`, { token: op.token });
    expect(signIn.status).toBe(200);
    const setCookie = signIn.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^driftline_session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    const cookie = { cookie: cookieOf(signIn) };
    expect((await fetch(`${h.url}/api/matrix`, { headers: cookie })).status).toBe(200);
    const session = SessionSchema.parse(
      await (await fetch(`${h.url}/api/session`, { headers: cookie })).json(),
    );
    expect(session).toMatchObject({ user: 'otto', roles: ['operator'], via: 'session' });

    const bare = await postJson(`${h.url}/api/plan-requests`, PLAN, cookie);
    expect(bare.status).toBe(403);
    expect((await code(bare)).code).toBe('csrf');
    const forged = await postJson(`${h.url}/api/plan-requests`, PLAN, { ...cookie, 'x-driftline-csrf': 'x' });
    expect(forged.status).toBe(403);
    expect(await h.hub.store.listPlanRequests()).toEqual([]);
    const ok = await postJson(`${h.url}/api/plan-requests`, PLAN, {
      ...cookie,
      'x-driftline-csrf': session.csrf,
    });
    expect(ok.status).toBe(201);

    // Signing out is a write too: another page cannot sign the person out.
    const forcedOut = await fetch(`${h.url}/api/session`, { method: 'DELETE', headers: cookie });
    expect([forcedOut.status, (await code(forcedOut)).code]).toEqual([403, 'csrf']);
    expect((await fetch(`${h.url}/api/matrix`, { headers: cookie })).status).toBe(200);
    const out = await fetch(`${h.url}/api/session`, {
      method: 'DELETE',
      headers: { ...cookie, 'x-driftline-csrf': session.csrf },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await fetch(`${h.url}/api/matrix`, { headers: cookie })).status).toBe(401);
  });

  it('ends a session after api.sessionTtlH, and the session of a revoked user at once', async () => {
    const h = await start({ api: { sessionTtlH: 1 } });
    const v = await addTestUser(h.hub.store, 'vera', ['viewer']);
    const sign = async () => ({
      cookie: cookieOf(await postJson(`${h.url}/api/session`, { token: v.token })),
    });
    const first = await sign();
    expect((await postJson(`${h.url}/api/session`, { token: v.token })).headers.get('set-cookie')).toContain(
      'Max-Age=3600',
    );
    h.clock.advance(3_600_001);
    expect((await fetch(`${h.url}/api/matrix`, { headers: first })).status).toBe(401);
    const second = await sign();
    expect((await fetch(`${h.url}/api/matrix`, { headers: second })).status).toBe(200);
    await revokeUser(h.hub.store, 'vera', Date.now());
    expect((await fetch(`${h.url}/api/matrix`, { headers: second })).status).toBe(401);
  });

  it('signs in from the ?token= link: a cookie and 303 to /, the token gone from the address', async () => {
    const h = await start();
    const v = await addTestUser(h.hub.store, 'vera', ['viewer']);
    const res = await fetch(`${h.url}/?token=${v.token}`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const cookie = { cookie: cookieOf(res) };
    expect((await fetch(`${h.url}/api/matrix`, { headers: cookie })).status).toBe(200);
    // A link on another site would sign the browser in as whoever made it (login CSRF): not followed.
    const crossSite = await fetch(`${h.url}/?token=${v.token}`, {
      redirect: 'manual',
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect([crossSite.status, crossSite.headers.get('location')]).toEqual([303, '/?signin=failed']);
    expect(crossSite.headers.get('set-cookie')).toBeNull();
    const bad = await fetch(`${h.url}/?token=nope`, { redirect: 'manual' });
    expect(bad.status).toBe(303);
    expect(bad.headers.get('location')).toBe('/?signin=failed');
    expect(bad.headers.get('set-cookie')).toBeNull();
  });

  it('opens reads but not writes with api.public', async () => {
    const h = await start({ api: { public: true } });
    expect((await fetch(`${h.url}/api/matrix`)).status).toBe(200);
    expect((await fetch(`${h.url}/metrics`)).status).toBe(200);
    const me = SessionSchema.parse(await (await fetch(`${h.url}/api/session`)).json());
    expect(me).toMatchObject({ user: 'public', roles: ['viewer'], via: 'public' });
    expect((await postJson(`${h.url}/api/plan-requests`, PLAN)).status).toBe(401);
    expect((await fetch(`${h.url}/api/matrix`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(
      401,
    );
    expect(await h.hub.store.listPlanRequests()).toEqual([]);
  });

  it('answers 429 with Retry-After past the rate limit, per credential and per address for failures', async () => {
    const h = await start({ api: { rateLimit: { perMinute: 3, failuresPerMinute: 2 } } });
    const v = await addTestUser(h.hub.store, 'vera', ['viewer']);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(`${h.url}/api/sites`, { headers: v })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await fetch(`${h.url}/api/sites`, { headers: v });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await code(limited)).code).toBe('too-many-requests');

    const o = await addTestUser(h.hub.store, 'otto', ['operator']);
    const guesses = [];
    for (let i = 0; i < 3; i++)
      guesses.push(
        (await fetch(`${h.url}/api/sites`, { headers: { authorization: `Bearer guess-${i}` } })).status,
      );
    expect(guesses).toEqual([401, 401, 429]);
    const blocked = await fetch(`${h.url}/api/sites`, { headers: o });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('audits every action and every failed sign-in, newest first', async () => {
    const h = await start();
    const admin = await addTestUser(h.hub.store, 'ada', ['admin']);
    const viewer = await addTestUser(h.hub.store, 'vera', ['viewer']);
    await postJson(`${h.url}/api/session`, { token: 'wrong' });
    await postJson(`${h.url}/api/session`, { token: admin.token });
    await postJson(`${h.url}/api/plan-requests`, PLAN, admin);
    await fetch(`${h.url}/api/publications?site=ship-7&name=x`, {
      method: 'POST',
      headers: viewer,
      body: 'x',
    });
    const res = await fetch(`${h.url}/api/audit?limit=50`, { headers: viewer });
    expect(res.status).toBe(200);
    const { entries } = AuditResponseSchema.parse(await res.json());
    const seen = entries.map((e) => [e.action, e.actor, e.outcome]);
    expect(seen).toEqual([
      ['publication.publish', 'vera', 'denied'],
      ['plan-request.create', 'ada', 'ok'],
      ['session.create', 'ada', 'ok'],
      ['auth.fail', 'anonymous', 'denied'],
      ['user.add', 'cli', 'ok'],
      ['user.add', 'cli', 'ok'],
    ]);
    expect(entries[1]?.target).toContain('ship-7/prod/net');
    expect(entries[1]).toMatchObject({ via: 'token', address: '127.0.0.1' });
    expect(JSON.stringify(entries)).not.toContain(admin.token);
    const page = AuditResponseSchema.parse(
      await (await fetch(`${h.url}/api/audit?limit=2&before=${entries[1]?.id}`, { headers: viewer })).json(),
    );
    expect(page.entries.map((e) => e.action)).toEqual(['session.create', 'auth.fail']);
    expect(h.logs.join('')).not.toContain(admin.token);
  });

  it('declares the security schemes and the role of every route in the OpenAPI document', async () => {
    const h = await start();
    const v = await addTestUser(h.hub.store, 'vera', ['viewer']);
    const doc = (await (await fetch(`${h.url}/api/openapi.json`, { headers: v })).json()) as {
      components: { securitySchemes: Record<string, { type: string }> };
      paths: Record<string, Record<string, { 'x-driftline-role': string }>>;
    };
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearer', 'cookie', 'peer']);
    expect(doc.paths['/api/publications']?.post?.['x-driftline-role']).toBe('publisher');
    expect(doc.paths['/api/bundles']?.post?.['x-driftline-role']).toBe('publisher');
    expect(doc.paths['/api/plan-requests']?.post?.['x-driftline-role']).toBe('operator');
    expect(doc.paths['/api/session']?.post?.['x-driftline-role']).toBe('open');
    expect(doc.paths['/api/audit']?.get?.['x-driftline-role']).toBe('viewer');
  });
});

describe('what an anonymous client cannot make the hub keep', () => {
  it('writes no audit entry once an address is over its failure limit, and keeps each entry short', async () => {
    const h = await start({ api: { rateLimit: { perMinute: 100_000, failuresPerMinute: 5 } } });
    // A declared route (an undeclared path is refused before any credential is read, and audits nothing).
    const path = `/api/sites/${'a'.repeat(8_000)}`;
    for (let i = 0; i < 50; i++) await fetch(`${h.url}${path}`, { headers: { authorization: 'Basic x' } });
    // (read from the store: this address is now locked out of token checks for a while, admins included)
    const entries = await h.hub.store.listAudit({ limit: 500 });
    const fails = entries.filter((e) => e.action === 'auth.fail');
    expect(fails.length).toBeGreaterThan(0);
    expect(fails.length).toBeLessThanOrEqual(6);
    for (const e of fails) expect(e.target.length).toBeLessThanOrEqual(201);
  });

  it('closes a sign-in whose body never arrives instead of holding the socket', async () => {
    const { connect } = await import('node:net');
    const h = await start();
    const { port } = new URL(h.url);
    // The hub's deadline is a timer: on virtual time, moved on by its length once the hub has armed it
    // for this body (the event waited on), so the test waits for no wall clock.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const fakeSetTimeout = globalThis.setTimeout;
      let armed: () => void = () => {};
      const deadlineArmed = new Promise<void>((r) => {
        armed = r;
      });
      const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
        fn: () => void,
        ms?: number,
        ...rest: unknown[]
      ) => {
        if (ms === JSON_BODY_DEADLINE_MS) armed();
        return fakeSetTimeout(fn, ms, ...rest);
      }) as typeof setTimeout);
      let open = true;
      const closed = new Promise<void>((resolve) => {
        const s = connect(Number(port), '127.0.0.1', () =>
          s.write(
            'POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{',
          ),
        );
        s.resume();
        s.on('close', () => {
          open = false;
          resolve();
        });
        s.on('error', () => {});
      });
      await deadlineArmed;
      spy.mockRestore();
      // a moment short of the deadline the socket is still held
      await vi.advanceTimersByTimeAsync(JSON_BODY_DEADLINE_MS - 1);
      expect(open).toBe(true);
      await vi.advanceTimersByTimeAsync(1);
      await closed;
      expect(open).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
