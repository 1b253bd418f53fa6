import { type Session, SessionCreateSchema, SessionSchema, WireError } from '@driftline/protocol';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { ApiConfig } from '../../config.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';
import type { HubAuth, Principal } from './auth.js';
import {
  clearedCookie,
  csrfFor,
  csrfOf,
  newSecret,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
  sha256Hex,
} from './credentials.js';
import { readJson } from './json.js';

export interface SessionDeps {
  auth: HubAuth;
  store: HubStore;
  clock: Clock;
  config: ApiConfig;
  csrfKey: Uint8Array;
}

/**
 * Dashboard sign-in: `POST /api/session` (token in the body), `GET /api/session` (who am I, and the CSRF
 * value), `DELETE /api/session` (sign out), and `GET /?token=` (the sign-in link `npm start` prints:
 * sets the cookie and answers 303 to `/`, so the token leaves the address bar).
 */
export function sessionRoutes(d: SessionDeps): Router {
  const r = new Router();

  const signIn = async (ctx: Context, token: string): Promise<Session> => {
    const u = await d.auth.tokenUser(ctx, token);
    ctx.state.principal = { ...u, via: 'token' } satisfies Principal;
    const sid = newSecret();
    const now = d.clock.now();
    const ttlS = d.config.sessionTtlH * 3600;
    const old = readCookie(ctx.get('cookie'), SESSION_COOKIE);
    await d.store.commit({
      sessions: [{ idSha256: sha256Hex(sid), user: u.user, createdAt: now, expiresAt: now + ttlS * 1000 }],
      ...(old ? { sessionDeletes: [sha256Hex(old)] } : {}),
    });
    await d.auth.record(ctx, 'session.create', 'ok', null, u.user);
    ctx.append('Set-Cookie', sessionCookie(sid, ttlS, d.auth.secure(ctx)));
    ctx.set('Cache-Control', 'no-store');
    return { user: u.user, roles: u.roles, csrf: csrfFor(d.csrfKey, sid), via: 'session' };
  };

  r.post('/api/session', async (ctx) => {
    const body = SessionCreateSchema.safeParse(await readJson(ctx, 4096, 'a sign-in body'));
    if (!body.success) throw new WireError('bad-request', 'send { "token": "<operator token>" }');
    ctx.body = SessionSchema.parse(await signIn(ctx, body.data.token));
  });

  r.get('/api/session', (ctx) => {
    const p = ctx.state.principal as Principal | null;
    if (!p) {
      ctx.set('WWW-Authenticate', 'Bearer realm="driftline"');
      throw new WireError('unauthorized', 'not signed in: sign in with a token (POST /api/session)');
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = SessionSchema.parse({
      user: p.user,
      roles: p.roles,
      csrf: p.via === 'session' || p.via === 'sso' ? csrfOf(d.csrfKey, p) : '',
      via: p.via,
    });
  });

  r.delete('/api/session', async (ctx) => {
    const sid = readCookie(ctx.get('cookie'), SESSION_COOKIE);
    if (sid) {
      await d.store.commit({ sessionDeletes: [sha256Hex(sid)] });
      const p = ctx.state.principal as Principal | null;
      if (p?.via === 'session') await d.auth.record(ctx, 'session.delete', 'ok', null, p.user);
    }
    ctx.append('Set-Cookie', clearedCookie(d.auth.secure(ctx)));
    ctx.status = 204;
  });

  r.get('/', async (ctx, next) => {
    const token = ctx.query.token;
    if (typeof token !== 'string') return next();
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-store');
    // A sign-in link followed from another site would sign the browser in as whoever made the link
    // (login CSRF): only a link opened by the person (typed, pasted, from a terminal) signs in.
    if (ctx.get('sec-fetch-site') === 'cross-site') {
      ctx.redirect('/?signin=failed');
      ctx.status = 303;
      return;
    }
    try {
      await signIn(ctx, token);
      ctx.redirect('/');
    } catch (e) {
      if (!(e instanceof WireError)) throw e;
      ctx.remove('WWW-Authenticate');
      ctx.remove('Retry-After');
      ctx.redirect('/?signin=failed');
    }
    ctx.status = 303;
  });

  return r;
}
