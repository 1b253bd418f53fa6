import {
  API_PATHS,
  DriftGroupsQuerySchema,
  DriftQuerySchema,
  parseExpiry,
  WaiverCreateSchema,
  WireError,
} from '@driftline/protocol';
import type { Context } from 'koa';
import type { Drift } from '../../../core/drift/Drift.js';
import { readJson } from '../json.js';
import { err } from '../openapiShared.js';
import type { Principal } from '../principal.js';
import type { RouteDeps } from './deps.js';
import { route } from './route.js';

/** Largest waiver body read, bytes. */
const MAX_WAIVER_BYTES = 32 * 1024;

function driftOf(d: RouteDeps): Drift {
  if (!d.drift) throw new WireError('not-found', 'this hub keeps no drift episodes');
  return d.drift;
}

const who = (ctx: Context) => {
  const p = ctx.state.principal as Principal | null | undefined;
  return { actor: p?.user ?? 'anonymous', via: 'api', address: ctx.ip };
};

/**
 * `/api/drift` and `/api/waivers` (decision 421): drift episodes (filters, a bounded page and a cursor),
 * one row per signature, acknowledging an episode, and the waivers that mark matching drift `waived`.
 */
export const driftRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.drift,
    role: 'viewer',
    query: DriftQuerySchema,
    response: { status: 200, schema: 'DriftResponse', description: 'episodes, newest first' },
    doc: {
      summary:
        'Drift episodes (and failing-check and failure episodes), newest first: filter by site, environment, component, address, type, kind, state; page with nextCursor',
      others: { '400': err('bad query') },
    },
    handler: async (_ctx, d, q) => driftOf(d).list(q),
  }),
  route({
    method: 'GET',
    path: API_PATHS.driftGroups,
    role: 'viewer',
    query: DriftGroupsQuerySchema,
    response: { status: 200, schema: 'DriftGroupsResponse', description: 'one row per signature' },
    doc: {
      summary:
        'Open episodes grouped by signature, most cells first, with sites, cells, open, waived and first seen',
      others: { '400': err('bad query') },
    },
    handler: async (_ctx, d, q) => driftOf(d).groups(q),
  }),
  route({
    method: 'POST',
    path: API_PATHS.driftAck,
    role: 'operator',
    audit: 'drift.acknowledge',
    response: { status: 200, schema: 'DriftEpisode', description: 'the episode, acknowledged' },
    doc: {
      summary: 'Acknowledge an episode: it names who did, and when',
      others: { '404': err('no such episode') },
    },
    handler: async (ctx, d) => {
      const id = (ctx.params.episodeId ?? '').slice(0, 2000);
      ctx.state.auditTarget = id;
      const e = await driftOf(d).acknowledge(id, who(ctx).actor);
      if (!e) throw new WireError('not-found', `no drift episode '${id.slice(0, 200)}'`);
      return e;
    },
  }),
  route({
    method: 'GET',
    path: API_PATHS.waivers,
    role: 'viewer',
    response: { status: 200, schema: 'WaiversResponse', description: 'waivers, oldest first' },
    doc: { summary: 'Every waiver, active, expired or removed, with how many open episodes each covers' },
    handler: async (_ctx, d) => ({ waivers: await driftOf(d).waivers() }),
  }),
  route({
    method: 'POST',
    path: API_PATHS.waivers,
    role: 'operator',
    audit: 'waiver.add',
    body: { schema: 'WaiverCreate', maxBytes: MAX_WAIVER_BYTES },
    response: { status: 201, schema: 'Waiver', description: 'created' },
    doc: {
      summary:
        'Waive matching drift until it expires: pattern (address or signature, * for any text), optional attributes, sites, environments, components, expires, reason',
      others: { '400': err('bad body or expiry'), '413': err('body over 32 KiB') },
    },
    handler: async (ctx, d) => {
      const body = await readJson(ctx, MAX_WAIVER_BYTES, 'a waiver');
      const req = WaiverCreateSchema.safeParse(body);
      if (!req.success) {
        const i = req.error.issues[0];
        throw new WireError('bad-request', `field '${i?.path.join('.') || '?'}': ${i?.message}`);
      }
      const expiresAt = parseExpiry(req.data.expires, d.clock.now());
      if (expiresAt === null)
        throw new WireError(
          'bad-request',
          "field 'expires': give a future time within a year, as ISO 8601 or a duration (30m, 12h, 7d)",
        );
      const { expires: _e, ...rest } = req.data;
      const w = await driftOf(d).addWaiver({ ...rest, expiresAt }, who(ctx));
      ctx.state.auditTarget = `${w.id} ${w.pattern}`.slice(0, 300);
      return w;
    },
  }),
  route({
    method: 'DELETE',
    path: API_PATHS.waiver,
    role: 'operator',
    audit: 'waiver.remove',
    response: { status: 200, schema: 'Waiver', description: 'the waiver, removed' },
    doc: {
      summary: 'Remove a waiver: the drift it covered returns',
      others: { '404': err('no such waiver') },
    },
    handler: async (ctx, d) => {
      const id = (ctx.params.waiverId ?? '').slice(0, 100);
      ctx.state.auditTarget = id;
      const w = await driftOf(d).removeWaiver(id, who(ctx));
      if (!w) throw new WireError('not-found', `no waiver '${id}'`);
      return w;
    },
  }),
];
