import { ERRORS, type ErrorCode, renderError, WireError } from '@driftline/protocol';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { bodyUnread, dropUnreadBody, errorHeaders } from './refuse.js';

/**
 * The one place a hop server turns errors into responses: a `WireError` renders its ERRORS entry,
 * koa/http-errors with a known status render the matching code, anything else is `internal` and logged.
 * Always `{ error: { code, message } }` (STYLE.md, Errors). A 401 names its scheme (`WWW-Authenticate`),
 * a 429 or 503 says when to retry (`Retry-After`), and a refused request whose body was not read closes
 * its connection instead of draining the body.
 */
export function errorMiddleware(
  logger: Logger,
  /** Turns a backend's own errors that pass (a busy store, a full disk) into wire errors; null for a bug. */
  mapError: (e: unknown) => WireError | null = () => null,
): Middleware {
  return async (ctx, next) => {
    let thrown: unknown;
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        const r = renderError('not-found', `no route for ${ctx.method} ${ctx.path}`);
        ctx.status = r.status;
        ctx.body = r.body;
      } else if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null)) {
        // A status set without a body (a router's 405, a 4xx from a mounted app) still gets a code.
        const code =
          (Object.keys(ERRORS) as ErrorCode[]).find((c) => ERRORS[c].status === ctx.status) ??
          (ctx.status < 500 ? 'bad-request' : 'internal');
        const r = renderError(code, code === 'method-not-allowed' ? `${ctx.method} ${ctx.path}` : undefined);
        ctx.status = r.status;
        ctx.body = r.body;
      }
    } catch (raw) {
      const e = raw instanceof WireError ? raw : (mapError(raw) ?? raw);
      thrown = e;
      const { code, detail } = classify(e);
      if (code === 'internal') logger.error({ err: e, path: ctx.path }, 'request failed');
      const r = renderError(code, detail);
      ctx.status = r.status;
      ctx.body = r.body;
    }
    if (ctx.status < 400) return;
    for (const [k, v] of Object.entries(errorHeaders(ctx.status, thrown)))
      if (!ctx.response.get(k)) ctx.set(k, v);
    if (bodyUnread(ctx.req)) dropUnreadBody(ctx.req, ctx.res, (k, v) => ctx.set(k, v));
  };
}

function classify(e: unknown): { code: ErrorCode; detail?: string } {
  if (e instanceof WireError) return { code: e.code, detail: e.detail };
  const status = (e as { status?: unknown }).status;
  if (typeof status === 'number' && (e as { expose?: unknown }).expose) {
    const hit = (Object.keys(ERRORS) as ErrorCode[]).find((c) => ERRORS[c].status === status);
    if (hit) return { code: hit, detail: (e as Error).message };
  }
  return { code: 'internal' };
}
