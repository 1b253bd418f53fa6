import { ERRORS, type ErrorCode, renderError, WireError } from '@driftline/protocol';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/**
 * The one place a hop server turns errors into responses: a `WireError` renders its ERRORS entry,
 * koa/http-errors with a known status render the matching code, anything else is `internal` and logged.
 * Always `{ error: { code, message } }` (STYLE.md, Errors).
 */
export function errorMiddleware(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        const r = renderError('not-found', `no route for ${ctx.method} ${ctx.path}`);
        ctx.status = r.status;
        ctx.body = r.body;
      }
    } catch (e) {
      const { code, detail } = classify(e);
      if (code === 'internal') logger.error({ err: e, path: ctx.path }, 'request failed');
      const r = renderError(code, detail);
      ctx.status = r.status;
      ctx.body = r.body;
    }
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
