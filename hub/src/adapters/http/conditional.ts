import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';

/** A strong entity tag of `bytes` (RFC 9110 §8.8.3): their sha256, base64url, quoted. */
export function strongEtag(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('base64url')}"`;
}

/**
 * Whether an `If-None-Match` value matches `etag`: `*`, or any listed tag by weak comparison
 * (RFC 9110 §13.1.2: `W/"x"` matches `"x"`).
 */
export function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const bare = (t: string) => t.trim().replace(/^W\//, '');
  const want = bare(etag);
  return (header.match(/(?:W\/)?"[^"]*"/g) ?? []).some((t) => bare(t) === want);
}

const isStream = (b: unknown) => typeof (b as { pipe?: unknown } | null)?.pipe === 'function';

/**
 * Gives every `200` answer of a `GET` or `HEAD` that has a body in memory (JSON, text, a file) a strong
 * `ETag` over the exact bytes sent, and answers `304 Not Modified` without a body when `If-None-Match`
 * names it (RFC 9110 §13.1.2, §15.4.5). `HEAD` runs the same handler as `GET`, so it carries the same
 * `ETag` and `Content-Length`. Streams (the event stream) are left alone. `/api` answers also say
 * `Cache-Control: private, no-cache` (unless a route set its own), so a browser revalidates instead of
 * showing a stale copy.
 */
export function conditionalGet(): Middleware {
  return async (ctx, next) => {
    await next();
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.status !== 200) return;
    const body: unknown = ctx.body;
    if (body === null || body === undefined || isStream(body)) return;
    const bytes =
      typeof body === 'string' || Buffer.isBuffer(body)
        ? Buffer.from(body as string | Buffer)
        : Buffer.from(JSON.stringify(body));
    // Sent as these bytes, so the tag is over exactly what the client receives.
    if (!Buffer.isBuffer(body)) ctx.body = bytes;
    const etag = ctx.response.get('ETag') || strongEtag(bytes);
    ctx.set('ETag', etag);
    if (ctx.path.startsWith('/api/') && !ctx.response.get('Cache-Control'))
      ctx.set('Cache-Control', 'private, no-cache');
    const inm = ctx.get('if-none-match');
    if (inm && noneMatchHits(inm, etag)) {
      ctx.status = 304;
      ctx.body = null;
    }
  };
}
