import {
  type DownlinkWatchAnswer,
  DownlinkWatchSchema,
  MAX_WATCH_BYTES,
  WireError,
} from '@driftline/protocol';
import type { Context } from 'koa';
import { scopeWatch } from '../core/scope.js';
import type { HopBackend, Peer } from '../ports/HopBackend.js';
import { bearerToken } from './auth.js';
import { holdOpen } from './heldPull.js';
import type { OpenCredentials } from './openCredentials.js';
import { readJsonBody } from './readBody.js';

/**
 * `POST /v1/downlink/watch` (a peer token; sites it acts for only, the others answered as `refused`): one
 * held request for all of a relay's sites, where a pull per site per interval was
 * (docs/decisions/620-one-watch-for-all-sites.md). Reads at most `MAX_WATCH_BYTES` of JSON naming each site
 * with the cursor the relay holds. Answers the sites with downlink after their cursor, at once when some
 * have; else it is held up to `wait` (at most the node's `watchMaxS`) until the first arrives. A token
 * revoked while it is held is let go at once and answered 401 (decision 411). A node that holds no watch
 * answers 404: the relay pulls site by site, as before.
 */
export async function postWatch(
  backend: HopBackend,
  ctx: Context,
  credentials?: OpenCredentials,
): Promise<void> {
  const watchDownlink = backend.watchDownlink?.bind(backend);
  if (!watchDownlink || !backend.watchMaxS)
    throw new WireError('not-found', `${backend.role} '${backend.name}' holds no downlink watch`);
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
  if (type !== 'application/json')
    throw new WireError(
      'unsupported-media-type',
      `send the watch as application/json, not '${type || 'nothing'}'`,
    );
  const body = await readJsonBody(ctx.req, MAX_WATCH_BYTES, DownlinkWatchSchema, {
    notJson: 'the watch is not JSON',
    mismatch: 'the watch does not match DownlinkWatch ({ "wait": seconds, "sites": { site: cursor } })',
  });
  const peer = ctx.state.peer as Peer;
  const { watched: cursors, refused } = scopeWatch(peer, Object.entries(body.sites));
  const ms = Math.min(body.wait, backend.watchMaxS) * 1000;
  const token = bearerToken(ctx.get('authorization'));
  const held = await holdOpen(ctx, token ? credentials : undefined, token, (signal) =>
    watchDownlink(cursors, ms, signal),
  );
  if (held.revoked)
    throw new WireError('unauthorized', 'the bearer token was revoked while this watch was held');
  const answer: DownlinkWatchAnswer = { sites: held.value, refused };
  ctx.set('cache-control', 'no-store');
  ctx.body = answer;
}
