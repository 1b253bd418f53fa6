import type { Session } from '@driftline/protocol';
import type { Context } from 'koa';
import type { ApiConfig } from '../../config.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';
import { csrfFor, newSecret, readCookie, SESSION_COOKIE, sessionCookie, sha256Hex } from './credentials.js';
import type { Principal } from './principal.js';
import type { SignInAuth } from './routes/deps.js';

/** What signing in needs. */
export interface SignInDeps {
  auth: SignInAuth;
  store: HubStore;
  clock: Clock;
  config: ApiConfig;
  csrfKey: Uint8Array;
}

/**
 * Trades an operator token for a session: stores the session (replacing the cookie's old one), records
 * `session.create` and sets the cookie. Throws 401/429 on a wrong token (`HubAuth.tokenUser`).
 */
export async function signIn(d: SignInDeps, ctx: Context, token: string): Promise<Session> {
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
}
