import { WireError } from '@driftline/protocol';
import Router from '@koa/router';
import { type SignInDeps, signIn } from './signIn.js';

/**
 * `GET /?token=`: the sign-in link `npm start` prints. Sets the cookie and answers 303 to `/`, so the
 * token leaves the address bar. The `/api/session` routes are in `routes/session.ts`.
 */
export function signInLink(d: SignInDeps): Router {
  const r = new Router();
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
      await signIn(d, ctx, token);
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
