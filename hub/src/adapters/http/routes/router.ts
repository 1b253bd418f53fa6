import Router from '@koa/router';
import type { Context } from 'koa';
import { parseOr400 } from '../parse.js';
import type { RouteDeps } from './deps.js';
import { answerSchema, type Route, WithStatus } from './route.js';

/** Runs one route: query parsed, handler called, a JSON answer checked against its schema before it leaves. */
async function serve(route: Route, ctx: Context, deps: RouteDeps): Promise<void> {
  if (route.deprecation) {
    // RFC 9745's `Deprecation` and RFC 8288's successor link, on every answer of a deprecated route.
    ctx.set('Deprecation', route.deprecation.at);
    ctx.set('Link', `<${route.deprecation.successor}>; rel="successor-version"`);
  }
  const query =
    route.query && !route.queryByHandler ? parseOr400(route.query, ctx.query, 'query parameter') : {};
  const out = await route.handler(ctx, deps, query as never);
  const answer = route.response;
  if (!('schema' in answer)) return;
  const status = out instanceof WithStatus ? out.status : answer.status;
  const body = out instanceof WithStatus ? out.body : out;
  ctx.status = status;
  const checked = answerSchema(answer).parse(body);
  ctx.body = answer.asBuilt ? body : checked;
}

/** The Koa router of `routes` (GET also answers HEAD); handlers get `deps`. */
export function routerOf(routes: readonly Route[], deps: RouteDeps): Router {
  const r = new Router();
  for (const route of routes) {
    const handle = (ctx: Context) => serve(route, ctx, deps);
    if (route.method === 'GET') r.get(route.path, handle);
    else if (route.method === 'POST') r.post(route.path, handle);
    else r.delete(route.path, handle);
  }
  return r;
}
