import {
  CLOCK_HEADER,
  CLOCK_RECEIVED_HEADER,
  CLOCK_REPLIED_HEADER,
  CLOCK_SENT_HEADER,
  type ClockEstimate,
  CUSTODY_HEADER,
  composeClocks,
  formatStamp,
  parseClock,
  parseClockTime,
  parseCustody,
  parseSourceClocks,
  SOURCE_CLOCKS_HEADER,
  STAMP_HEADER,
  stampBytes,
  TRUSTED_CLOCK,
} from '@driftline/protocol';
import type { Context, Middleware } from 'koa';
import type { Custody, Peer, SourceClocks } from '../ports/HopBackend.js';

/** A node's own key for stamping the exchanges it serves (docs/decisions/290-signed-hop-chain.md). */
export interface StampKey {
  /** `ed25519:…`, as enrolled upstream of the clients. */
  publicKey: string;
  sign(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/**
 * Stamps the server's side of an exchange (`t1` when the request arrived, `t2` when the answer leaves)
 * on the answer to every request that carried the client's send time `t0`; other requests are answered
 * as before. With `stamp`, it also signs `t0, t1, t2` (`driftline-stamp`), so a hop between this node
 * and its client cannot rewrite them unnoticed.
 */
export function exchangeTimes(now: () => number, stamp?: StampKey): Middleware {
  return async (ctx, next) => {
    const t1 = now();
    const t0 = parseClockTime(ctx.get(CLOCK_SENT_HEADER));
    try {
      await next();
    } finally {
      if (t0 !== null) {
        const t2 = now();
        ctx.set(CLOCK_RECEIVED_HEADER, String(t1));
        ctx.set(CLOCK_REPLIED_HEADER, String(t2));
        if (stamp)
          ctx.set(STAMP_HEADER, formatStamp(stamp.publicKey, await stamp.sign(stampBytes(t0, t1, t2))));
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
    return this.remember(peer.name, parseClock(ctx.get(CLOCK_HEADER)));
  }

  private remember(name: string, reported: ClockEstimate | null | undefined): ClockEstimate | null {
    if (reported) {
      this.byPeer.delete(name);
      this.byPeer.set(name, reported);
      if (this.byPeer.size > this.max) this.byPeer.delete(this.byPeer.keys().next().value as string);
    }
    return this.byPeer.get(name) ?? null;
  }

  /**
   * The clock of a hop v2 push this node took from its agent (`POST /v2`): the agent's term in the push
   * (field 10, docs/decisions/495-hop-v2-on-the-agent-link.md) is noted as a v1 peer's `driftline-clock`
   * is, under the agent's `site/agent` (kept for its next pushes, as a peer's is), and the push's source
   * is the agent itself, so its clock minus this node's is that term: v1's `site/agent=0;u=0` composed
   * with it. A trusted clock stays trusted; an agent that never stated a term has no estimate.
   */
  ofPush(source: string, reported: ClockEstimate | undefined): SourceClocks {
    const e = this.remember(source, reported);
    return (s) => (s === source ? e : null);
  }

  /** Koa middleware (after auth): notes what the request's peer reports. */
  middleware(): Middleware {
    return async (ctx, next) => {
      this.note(ctx.state.peer as Peer, ctx);
      await next();
    };
  }

  /** The custody records of a `POST /v1/bundles` and the posting peer's own clock minus this node's. */
  custodyOf(peer: Peer, ctx: Context): Custody {
    return { records: parseCustody(ctx.get(CUSTODY_HEADER)), peerClock: this.byPeer.get(peer.name) ?? null };
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
