import { DOWNLINK_WATCH_PATH, PEER_PATH, STATUS_PATH, wire2 } from '@driftline/protocol';
import type { Context } from 'koa';
import { serveBlob } from './blobRoute.js';
import { getBundles, postBundles } from './bundleRoutes.js';
import { healthHandler } from './lifecycle.js';
import { getPeer, postStatus } from './peerRoutes.js';
import type { HopRouteDeps } from './routeDeps.js';
import { postWatch } from './watchRoute.js';
import { postWire2, registerWire2 } from './wire2Routes.js';

/**
 * Who may call a hop route: a `peer` (its bearer token is resolved before the handler runs, into
 * `ctx.state.peer`), anyone (`open`), whoever the node's `MetricsAccess` lets (`metrics`), or the sender
 * whose registered key signed the message (`signed`: the handler checks it, decision 495).
 */
export type HopRole = 'peer' | 'open' | 'metrics' | 'signed';

/** One hop API endpoint, declared once: `createHopServer` registers it with the guard its role names. */
export interface HopRoute {
  method: 'GET' | 'POST';
  path: string;
  /** Required: a route without a role does not compile. */
  role: HopRole;
  /** Reads the peer's clock report from the request (the exchange's times: decision 290). */
  clocks?: true;
  handler: (ctx: Context, d: HopRouteDeps) => Promise<void> | void;
}

const noNext = async () => {};

/**
 * Every Koa route of the hop API (tus is served beside Koa at `/v1/uploads`), one entry each
 * (docs/decisions/280-one-place-per-decision.md).
 */
export const HOP_ROUTES: readonly HopRoute[] = [
  {
    method: 'POST',
    path: '/v1/bundles',
    role: 'peer',
    clocks: true,
    handler: (ctx, d) => postBundles(d.backend, d.metrics, d.limits, ctx, d.peerClocks),
  },
  {
    method: 'GET',
    path: '/v1/bundles',
    role: 'peer',
    clocks: true,
    handler: (ctx, d) => getBundles(d.backend, d.metrics, ctx, d.credentials),
  },
  {
    method: 'POST',
    path: DOWNLINK_WATCH_PATH,
    role: 'peer',
    handler: (ctx, d) => postWatch(d.backend, ctx, d.credentials),
  },
  {
    method: 'GET',
    path: '/v1/blobs/:sha256',
    role: 'peer',
    handler: (ctx, d) => serveBlob(d.backend, ctx, ctx.params.sha256 ?? ''),
  },
  { method: 'GET', path: PEER_PATH, role: 'peer', handler: (ctx, d) => getPeer(d.backend, ctx) },
  {
    method: 'POST',
    path: wire2.WIRE2_REGISTER_PATH,
    role: 'peer',
    handler: (ctx, d) => registerWire2(d, ctx),
  },
  // no bearer token: each message is signed by its sender's registered key (decision 495)
  { method: 'POST', path: wire2.WIRE2_PATH, role: 'signed', handler: (ctx, d) => postWire2(d, ctx) },
  { method: 'POST', path: STATUS_PATH, role: 'peer', handler: (ctx, d) => postStatus(d.backend, ctx) },
  {
    method: 'GET',
    path: '/v1/health',
    role: 'open',
    handler: (ctx, d) => healthHandler(d.backend)(ctx, noNext),
  },
  {
    method: 'GET',
    path: '/metrics',
    role: 'metrics',
    handler: async (ctx, d) => {
      ctx.type = d.metrics.registry.contentType;
      ctx.body = await d.metrics.registry.metrics();
    },
  },
];
