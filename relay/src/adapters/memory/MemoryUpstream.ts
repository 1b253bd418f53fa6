import {
  actsFor,
  type HopBackend,
  MemoryHopBackend,
  type Peer,
  type SourceClocks,
  scopeWatch,
} from '@driftline/hop';
import { type HopFailure, retryableStatus } from '@driftline/hop/client';
import {
  type ClockEstimate,
  composeClocks,
  DownlinkQuerySchema,
  decodeBundle,
  type ErrorCode,
  renderError,
  TRUSTED_CLOCK,
  WireError,
} from '@driftline/protocol';
import type { Upstream } from '../../ports/Upstream.js';

/** The token a default `MemoryUpstream` uses; its terminal knows it as a relay acting for every site. */
export const MEMORY_UPSTREAM_TOKEN = 'memory-upstream-token';

/** One batch as it was posted: its bundles' ids (null: undecodable) and the source clocks sent with it. */
export interface PostedBatch {
  ids: (string | null)[];
  clocks: ReadonlyMap<string, ClockEstimate> | undefined;
}

/** A same-process link: no delay, one clock, so a source's estimate arrives as it was sent. */
const SAME_CLOCK: ClockEstimate = { offsetMs: 0, uncertaintyMs: 0 };

/**
 * An upstream in the same process, for tests: batches and downlink go straight to a `HopBackend`
 * (by default a `MemoryHopBackend`, a terminal standing in for the hub) as `HttpUpstream` reaches one
 * through a hop server, with the same answers and failure shapes — `unauthorized` for a token the
 * backend does not know, `forbidden` for a site the peer does not act for, `bad-query`, a backend's
 * `WireError` by its code, anything else it throws as `internal`, and `unreachable` while `down`.
 * Both pass `runUpstreamContract`. `bytes` is the bundles' own length (nothing is framed or compressed).
 * It records every batch posted (`batches`, `received`).
 */
export class MemoryUpstream implements Upstream {
  readonly backend: HopBackend;
  /** While true, every request fails as a link that is down does (`unreachable`, retryable). */
  down = false;
  /** Every batch posted while up, in order, whatever the backend answered. */
  readonly batches: PostedBatch[] = [];
  private readonly token: string;

  constructor(
    readonly name = 'hub',
    opts: { backend?: HopBackend; token?: string } = {},
  ) {
    if (opts.backend) this.backend = opts.backend;
    else {
      const terminal = new MemoryHopBackend({ name, role: 'hub' });
      terminal.addToken(MEMORY_UPSTREAM_TOKEN, { name: 'relay', sites: ['*'] });
      this.backend = terminal;
    }
    this.token = opts.token ?? MEMORY_UPSTREAM_TOKEN;
  }

  /** The ids of every bundle posted, in order, duplicates included. */
  get received(): (string | null)[] {
    return this.batches.flatMap((b) => b.ids);
  }

  async postBatch(bundles: readonly Uint8Array[], clocks?: ReadonlyMap<string, ClockEstimate>) {
    return this.call(async (peer) => {
      this.batches.push({
        ids: bundles.map((b) => {
          const d = decodeBundle(b);
          return d.ok ? d.value.header.id : null;
        }),
        clocks,
      });
      const receipts = await this.backend.accept(peer, bundles, clocks ? sourceClocks(clocks) : undefined);
      return { ok: true as const, receipts, bytes: byteLength(bundles) };
    });
  }

  async pullDownlink(site: string, after: string | undefined, limit: number) {
    return this.call(async (peer) => {
      const q = DownlinkQuerySchema.safeParse({ for: site, after, limit });
      if (!q.success) {
        const first = q.error.issues[0];
        throw new WireError('bad-query', `'${first?.path.join('.') || '?'}': ${first?.message ?? 'invalid'}`);
      }
      if (!actsFor(peer, site))
        throw new WireError('forbidden', `peer '${peer.name}' may not pull downlink for site '${site}'`);
      const r = await this.backend.downlink(peer, q.data);
      return { ok: true as const, ...r, bytes: byteLength(r.bundles) };
    });
  }

  async watchDownlink(cursors: ReadonlyMap<string, string>, waitS: number, signal?: AbortSignal) {
    return this.call(async (peer) => {
      const watch = this.backend.watchDownlink?.bind(this.backend);
      if (!watch || !this.backend.watchMaxS)
        throw new WireError(
          'not-found',
          `${this.backend.role} '${this.backend.name}' holds no downlink watch`,
        );
      const { watched: mine, refused } = scopeWatch(peer, cursors);
      const ms = Math.min(waitS, this.backend.watchMaxS) * 1000;
      const sites = await watch(mine, ms, signal ?? new AbortController().signal);
      return { ok: true as const, sites, refused };
    });
  }

  /** Runs one request as a hop server would: authenticated, every error turned into a failure. */
  private async call<T>(fn: (peer: Peer) => Promise<T>): Promise<T | HopFailure> {
    if (this.down)
      return {
        ok: false,
        code: 'unreachable',
        message: `unreachable: upstream '${this.name}' is down`,
        retryable: true,
      };
    try {
      const peer = await this.backend.authenticate(this.token);
      if (!peer) throw new WireError('unauthorized', 'the bearer token is unknown or revoked');
      return await fn(peer);
    } catch (e) {
      const code: ErrorCode = e instanceof WireError ? e.code : 'internal';
      const r = renderError(code, e instanceof WireError ? e.detail : undefined);
      return {
        ok: false,
        code,
        message: `HTTP ${r.status} ${code}: ${r.body.error.message}`,
        retryable: retryableStatus(r.status),
        status: r.status,
      };
    }
  }
}

/** What a hop server makes of sent source clocks: trusted stays trusted, the rest composed with the hop's. */
function sourceClocks(clocks: ReadonlyMap<string, ClockEstimate>): SourceClocks {
  return (source) => {
    const s = clocks.get(source);
    if (!s) return null;
    return s.trusted ? TRUSTED_CLOCK : composeClocks(s, SAME_CLOCK);
  };
}

const byteLength = (bundles: readonly Uint8Array[]) => bundles.reduce((n, b) => n + b.length, 0);
