import { Sha256Schema, WireError } from '@driftline/protocol';
import type { Context } from 'koa';
import { decideRange } from '../core/range.js';
import type { HopBackend, Peer } from '../ports/HopBackend.js';

/** `GET|HEAD /v1/blobs/:sha256` with `Range`/`If-Range` and a strong ETag (RFC 9110 §8.8.3, §13.1.5, §14). */
export async function serveBlob(backend: HopBackend, ctx: Context, sha: string): Promise<void> {
  if (!Sha256Schema.safeParse(sha).success) {
    throw new WireError('bad-request', `'${sha.slice(0, 80)}' is not a sha256 (64 lowercase hex characters)`);
  }
  const stat = await backend.blobs.stat(sha, ctx.state.peer as Peer);
  if (!stat) throw new WireError('not-found', `no complete blob ${sha} here`);
  ctx.set('ETag', stat.etag);
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('Last-Modified', new Date(stat.mtimeMs).toUTCString());
  ctx.type = 'application/octet-stream';
  if (ctx.get('if-none-match') && ctx.get('if-none-match') === stat.etag) {
    ctx.status = 304;
    return;
  }
  const d = decideRange(
    stat.size,
    stat.etag,
    ctx.get('range') || undefined,
    ctx.get('if-range') || undefined,
  );
  if (d.kind === 'unsatisfiable') {
    ctx.set('Content-Range', `bytes */${stat.size}`);
    throw new WireError('range-not-satisfiable', `the blob is ${stat.size} bytes`);
  }
  const [start, end] = d.kind === 'partial' ? [d.start, d.end] : [0, stat.size - 1];
  ctx.status = d.kind === 'partial' ? 206 : 200;
  if (d.kind === 'partial') ctx.set('Content-Range', `bytes ${start}-${end}/${stat.size}`);
  const length = stat.size === 0 ? 0 : end - start + 1;
  if (ctx.method === 'HEAD') {
    // No body at all: an explicit null body would turn Koa's 200 into a 204 (RFC 9110 §9.3.2: HEAD is GET's headers).
    ctx.length = length;
    return;
  }
  if (length === 0) {
    ctx.body = '';
    ctx.length = 0;
    return;
  }
  ctx.body = backend.blobs.read(sha, start, end);
  ctx.length = length;
}
