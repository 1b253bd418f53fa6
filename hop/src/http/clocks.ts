import {
  CLOCK_HEADER,
  CLOCK_RECEIVED_HEADER,
  CLOCK_REPLIED_HEADER,
  CLOCK_SENT_HEADER,
  type ClockEstimate,
  composeClocks,
  parseClock,
  parseClockTime,
  parseSourceClocks,
  SOURCE_CLOCKS_HEADER,
  TRUSTED_CLOCK,
} from '@driftline/protocol';
import type { Context, Middleware } from 'koa';
import type { Peer, SourceClocks } from '../ports/HopBackend.js';

/**
 * Stamps the server's side of an exchange (`t1` when the request arrived, `t2` when the answer leaves)
 * on the answer to every request that carried the client's send time `t0`; other requests are answered
 * as before.
 */
export function exchangeTimes(now: () => number): Middleware {
  return async (ctx, next) => {
    const t1 = now();
    const asked = parseClockTime(ctx.get(CLOCK_SENT_HEADER)) !== null;
    try {
      await next();
    } finally {
      if (asked) {
        ctx.set(CLOCK_RECEIVED_HEADER, String(t1));
        ctx.set(CLOCK_REPLIED_HEADER, String(now()));
      }
    }
  };
}

/**
 * Each peer's own clock minus this node's, as the peer last reported it (`driftline-clock`, measured by
 * the peer from the times this node stamped). Kept across requests, so a batch posted before the peer
 * has an estimate of its own still composes with the last one it gave. Bounded: the oldest goes first.
 */
export class PeerClocks {
  private readonly byPeer = new Map<string, ClockEstimate>();

  constructor(private readonly max = 10_000) {}

  /** Notes the peer's report on this request, if it made one; returns the peer's latest estimate. */
  note(peer: Peer, ctx: Context): ClockEstimate | null {
    const reported = parseClock(ctx.get(CLOCK_HEADER));
    if (reported) {
      this.byPeer.delete(peer.name);
      this.byPeer.set(peer.name, reported);
      if (this.byPeer.size > this.max) this.byPeer.delete(this.byPeer.keys().next().value as string);
    }
    return this.byPeer.get(peer.name) ?? null;
  }

  /** Koa middleware (after auth): notes what the request's peer reports. */
  middleware(): Middleware {
    return async (ctx, next) => {
      this.note(ctx.state.peer as Peer, ctx);
      await next();
    };
  }

  /**
   * The estimates of a `POST /v1/bundles`: each listed source's clock minus the peer's, composed with the
   * peer's clock minus this node's. A trusted source needs no hop; an unlisted one has no estimate.
   */
  sourcesOf(peer: Peer, ctx: Context): SourceClocks {
    const sources = parseSourceClocks(ctx.get(SOURCE_CLOCKS_HEADER));
    const hop = this.byPeer.get(peer.name) ?? null;
    return (source) => {
      const s = sources.get(source);
      if (!s) return null;
      if (s.trusted) return TRUSTED_CLOCK;
      return hop ? composeClocks(s, hop) : null;
    };
  }
}
