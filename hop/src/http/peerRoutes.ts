import {
  MAX_STATUS_BYTES,
  type PeerInfo,
  type RelayStatus,
  RelayStatusSchema,
  WireError,
} from '@driftline/protocol';
import type { Context } from 'koa';
import type { HopBackend, Peer } from '../ports/HopBackend.js';
import { readJsonBody } from './readBody.js';
import { statedBy } from './wire2Routes.js';

/**
 * `GET /v1/peer`: who the bearer token is here and the sites it acts for. Any peer token may ask, about
 * itself only; a relay calls it at start and on a refusal to learn its sites from upstream
 * (docs/decisions/240-peers-and-relay-health.md), and `relay config check --online` to test a token.
 * A node that speaks hop v2 says so (`wire: [1, 2]`): a relay states v2 to its agents only when its
 * upstreams do (docs/decisions/495-hop-v2-on-the-agent-link.md), and what of the hub's v2 messages it carries
 * down (`carries`, decision 505), and which compact push forms every node to the hub reads (`pushForms`,
 * decision 510).
 */
export function getPeer(backend: HopBackend, ctx: Context): void {
  ctx.set('cache-control', 'no-store');
  ctx.body = peerInfoOf(backend, ctx.state.peer as Peer);
}

/** What `GET /v1/peer` says of `peer` here, and what `POST /v1/status` answers with. */
function peerInfoOf(backend: HopBackend, peer: Peer): PeerInfo {
  const v2 = backend.wire2 && (backend.wire2.speaking?.() ?? true) === true ? backend.wire2 : null;
  const carries = statedBy(v2, 'carries');
  const pushForms = statedBy(v2, 'pushForms');
  return {
    name: peer.name,
    sites: [...peer.sites],
    ...(v2 ? { wire: [1, 2] } : {}),
    ...(carries.length > 0 ? { carries } : {}),
    ...(pushForms.length > 0 ? { pushForms } : {}),
    // a node that holds a downlink watch says for how long (decision 620)
    ...(backend.watchDownlink && backend.watchMaxS ? { watchS: backend.watchMaxS } : {}),
  };
}

/**
 * `POST /v1/status`: a relay's own health (JSON, at most `MAX_STATUS_BYTES`), from the relay's peer token;
 * the backend keeps the latest per peer. A node that keeps none (a relay) answers 404. Kept, it answers
 * what `GET /v1/peer` would (200): a relay's status each minute and its look at who it is upstream are one
 * exchange, not two (docs/decisions/610-status-answers-who-you-are.md); a relay before it reads no body.
 */
export async function postStatus(backend: HopBackend, ctx: Context): Promise<void> {
  if (!backend.acceptStatus)
    throw new WireError('not-found', `${backend.role} '${backend.name}' keeps no relay status`);
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
  if (type !== 'application/json')
    throw new WireError(
      'unsupported-media-type',
      `send the status as application/json, not '${type || 'nothing'}'`,
    );
  const status = await readJsonBody(ctx.req, MAX_STATUS_BYTES, RelayStatusSchema, {
    notJson: 'the status is not JSON',
    mismatch: 'the status does not match RelayStatus',
  });
  const peer = ctx.state.peer as Peer;
  await backend.acceptStatus(peer, status as RelayStatus);
  ctx.set('cache-control', 'no-store');
  ctx.body = peerInfoOf(backend, peer);
}
