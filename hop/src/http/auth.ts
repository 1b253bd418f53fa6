import { WireError } from '@driftline/protocol';
import type { Middleware } from 'koa';
import { actsFor } from '../core/scope.js';
import type { HopBackend, Peer } from '../ports/HopBackend.js';

/** The bearer token of a request, or null. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S{1,512})\s*$/i.exec(header);
  return m ? (m[1] as string) : null;
}

/** Resolves the peer of a request or throws `unauthorized` (401). */
export async function authenticate(backend: HopBackend, header: string | undefined | null): Promise<Peer> {
  const token = bearerToken(header);
  if (!token) throw new WireError('unauthorized', 'no bearer token in the Authorization header');
  const peer = await backend.authenticate(token);
  if (!peer) throw new WireError('unauthorized', 'the bearer token is unknown or revoked');
  return peer;
}

/** Koa middleware: puts the authenticated peer in `ctx.state.peer`. */
export function requirePeer(backend: HopBackend): Middleware {
  return async (ctx, next) => {
    ctx.state.peer = await authenticate(backend, ctx.get('authorization'));
    await next();
  };
}

/** Whether `peer` may pull `site`'s downlink: it acts for the site (S4). */
export const mayPullFor = actsFor;
