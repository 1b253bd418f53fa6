import {
  BATCH_CONTENT_TYPE,
  CURSOR_HEADER,
  DownlinkQuerySchema,
  decodeBatch,
  encodeBatch,
  REFUSALS_HEADER,
  WireError,
} from '@driftline/protocol';
import type { Context } from 'koa';
import type { HopMetrics } from '../metrics.js';
import type { HopBackend, Peer } from '../ports/HopBackend.js';
import { compressBatch } from '../wire/compress.js';
import { mayPullFor } from './auth.js';
import type { PeerClocks } from './clocks.js';
import { holdPull } from './heldPull.js';
import type { OpenCredentials } from './openCredentials.js';
import { readLimitedBody } from './readBody.js';

const ACCEPTED_TYPES = [BATCH_CONTENT_TYPE, 'application/octet-stream'];

/** `POST /v1/bundles`: framing and size are checked here, custody is the backend's (D1, D2). */
export async function postBundles(
  backend: HopBackend,
  metrics: HopMetrics,
  limits: { maxBatchBytes: number; maxBundlesPerBatch: number },
  ctx: Context,
  clocks?: PeerClocks,
): Promise<void> {
  const peer = ctx.state.peer as Peer;
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
  if (!ACCEPTED_TYPES.includes(type)) {
    throw new WireError('unsupported-media-type', `Content-Type '${type}' is not ${BATCH_CONTENT_TYPE}`);
  }
  const body = await readLimitedBody(ctx.req, limits.maxBatchBytes);
  metrics.bytesIn.inc({ peer: peer.name }, body.length);
  const batch = decodeBatch(body, limits.maxBundlesPerBatch);
  if (!batch.ok) throw new WireError(batch.error.code, batch.error.message);
  const receipts = await backend.accept(
    peer,
    batch.value,
    clocks?.sourcesOf(peer, ctx),
    clocks?.custodyOf(peer, ctx),
  );
  ctx.body = { receipts };
}

/** `GET /v1/bundles?for&after&limit`: a batch, and the cursor to send back as `after`. */
export async function getBundles(
  backend: HopBackend,
  metrics: HopMetrics,
  ctx: Context,
  credentials?: OpenCredentials,
): Promise<void> {
  const peer = ctx.state.peer as Peer;
  const parsed = DownlinkQuerySchema.safeParse(ctx.query);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new WireError('bad-query', `'${first?.path.join('.') || '?'}': ${first?.message ?? 'invalid'}`);
  }
  if (!mayPullFor(peer, parsed.data.for)) {
    throw new WireError(
      'forbidden',
      `peer '${peer.name}' may not pull downlink for site '${parsed.data.for}'`,
    );
  }
  if (ctx.method === 'HEAD') {
    // Reading the downlink hands bundles out (plan requests become `delivered`): a HEAD must not.
    ctx.status = 200;
    ctx.type = BATCH_CONTENT_TYPE;
    return;
  }
  let { bundles, cursor } = await backend.downlink(peer, parsed.data);
  let superseded = false;
  const { wait } = parsed.data;
  if (wait !== undefined && backend.waitForDownlink) {
    const page = await holdPull(
      backend,
      peer,
      { ...parsed.data, wait },
      ctx,
      { bundles, cursor },
      credentials,
    );
    ({ bundles, cursor, quiet: superseded } = page);
  }
  const refusals = superseded ? [] : (backend.refusalsFor?.(parsed.data.for) ?? []);
  // A conditional pull (If-None-Match: "<cursor it holds>", RFC 9110 §13.1.2): the page's ETag is its
  // cursor, and nothing since that cursor is a bare 304: no body, no cursor header (decision 320).
  const ifNoneMatch = ctx.get('if-none-match');
  if (ifNoneMatch) ctx.set('etag', `"${cursor}"`);
  const unchanged = bundles.length === 0 && refusals.length === 0 && cursor === (parsed.data.after ?? '0');
  if (unchanged && ifNoneMatch === `"${cursor}"`) {
    ctx.status = 304;
    return;
  }
  let body: Uint8Array = encodeBatch(bundles);
  // Compressed whenever that pays for its `Content-Encoding: br` line (~24 B): an ack or a manifest page
  // of a few hundred bytes shrinks by a third (decision 380), an empty page not at all.
  if (bundles.length > 0 && /\bbr\b/.test(ctx.get('accept-encoding'))) {
    const compressed = compressBatch(body);
    if (compressed.length + 24 < body.length) {
      body = compressed;
      ctx.set('Content-Encoding', 'br');
    }
  }
  ctx.set(CURSOR_HEADER, cursor);
  // what the relay's upstream refused of this site's bundles, for its agents to show (decision 240)
  if (refusals.length > 0)
    ctx.set(REFUSALS_HEADER, Buffer.from(JSON.stringify(refusals)).toString('base64url'));
  ctx.type = BATCH_CONTENT_TYPE;
  ctx.body = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  metrics.bytesOut.inc({ peer: peer.name }, body.length);
}
