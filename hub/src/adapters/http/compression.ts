import { constants } from 'node:zlib';
import type { Middleware } from 'koa';
import compress from 'koa-compress';

/** Answers smaller than this go as they are: compressing them saves less than its headers cost. */
const THRESHOLD_BYTES = 1024;

/**
 * Compressed answers (koa-compress: br, else gzip; never deflate) for what the people's side sends,
 * the event stream excepted (it must flush each event). Brotli at quality 4: most of quality 11's gain
 * on JSON for a fraction of its CPU, which the hub's one thread shares with ingest.
 */
export function compression(): Middleware {
  return compress({
    threshold: THRESHOLD_BYTES,
    filter: (type) => type !== 'text/event-stream' && compressible(type),
    br: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
    gzip: { level: 6 },
    deflate: false,
  });
}

function compressible(type: string): boolean {
  return /^(?:text\/|application\/(?:json|javascript|problem\+json|xml))|\+json$|svg/.test(type);
}

/**
 * A compressed answer is another representation of the same content: its `ETag` becomes weak (RFC 9110
 * §8.8.3), and so does a 304's for a client that takes br or gzip, so the tag a client holds matches
 * (`If-None-Match` compares weakly).
 */
export function weakEncodedEtags(): Middleware {
  return async (ctx, next) => {
    await next();
    const etag = ctx.response.get('ETag');
    if (!etag || etag.startsWith('W/')) return;
    const encoded = ctx.response.get('Content-Encoding');
    const would = ctx.status === 304 && /\b(?:br|gzip)\b/.test(ctx.get('accept-encoding'));
    if ((encoded && encoded !== 'identity') || would) ctx.set('ETag', `W/${etag}`);
  };
}
