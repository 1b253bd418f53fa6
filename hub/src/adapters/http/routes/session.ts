import { API_PATHS, SessionCreateSchema, WireError } from '@driftline/protocol';
import { clearedCookie, csrfOf, readCookie, SESSION_COOKIE, sha256Hex } from '../credentials.js';
import { readJson } from '../json.js';
import { err, retryLater, unauthorized } from '../openapiShared.js';
import type { Principal } from '../principal.js';
import { signIn } from '../signIn.js';
import { route } from './route.js';

/**
 * Dashboard sign-in: `POST /api/session` (token in the body), `GET /api/session` (who am I, and the CSRF
 * value), `DELETE /api/session` (sign out). The sign-in link `GET /?token=` is in `sessionRoutes.ts`.
 * All three are open: they authenticate themselves.
 */
export const sessionRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.session,
    role: 'open',
    response: { status: 200, schema: 'Session', description: 'signed in' },
    doc: {
      summary:
        'Who is signed in, with which roles and how; `csrf` is the value cookie-authenticated writes send',
      others: { '401': unauthorized('not signed in') },
    },
    handler: (ctx, d) => {
      const p = ctx.state.principal as Principal | null;
      if (!p) {
        ctx.set('WWW-Authenticate', 'Bearer realm="driftline"');
        throw new WireError('unauthorized', 'not signed in: sign in with a token (POST /api/session)');
      }
      ctx.set('Cache-Control', 'no-store');
      return {
        user: p.user,
        roles: p.roles,
        csrf: p.via === 'session' || p.via === 'sso' ? csrfOf(d.csrfKey, p) : '',
        via: p.via,
      };
    },
  }),
  route({
    method: 'POST',
    path: API_PATHS.session,
    role: 'open',
    body: { schema: 'SessionCreate', maxBytes: 4096 },
    response: { status: 200, schema: 'Session', description: 'signed in; Set-Cookie carries the session' },
    doc: {
      summary: 'Sign in with an operator token: sets the session cookie',
      others: {
        '400': err('not { "token": "…" }, or not JSON'),
        '401': unauthorized('wrong or revoked token'),
        '413': err('body over 4 KiB'),
        '429': retryLater('too many failed sign-ins from this address'),
      },
    },
    handler: async (ctx, d) => {
      const body = SessionCreateSchema.safeParse(await readJson(ctx, 4096, 'a sign-in body'));
      if (!body.success) throw new WireError('bad-request', 'send { "token": "<operator token>" }');
      return signIn(d, ctx, body.data.token);
    },
  }),
  route({
    method: 'DELETE',
    path: API_PATHS.session,
    role: 'open',
    response: { status: 204, raw: { description: 'signed out' } },
    doc: { summary: 'Sign out: deletes the session and clears the cookie' },
    handler: async (ctx, d) => {
      const sid = readCookie(ctx.get('cookie'), SESSION_COOKIE);
      if (sid) {
        await d.store.commit({ sessionDeletes: [sha256Hex(sid)] });
        const p = ctx.state.principal as Principal | null;
        if (p?.via === 'session') await d.auth.record(ctx, 'session.delete', 'ok', null, p.user);
      }
      ctx.append('Set-Cookie', clearedCookie(d.auth.secure(ctx)));
      ctx.status = 204;
    },
  }),
];
