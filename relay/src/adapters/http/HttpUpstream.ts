import { HopClient } from '@driftline/hop/client';
import { type ClockEstimate, encodeBatch } from '@driftline/protocol';
import type { Upstream } from '../../ports/Upstream.js';

/**
 * An upstream over HTTP, through hop's client: brotli-compressed batches, bearer token, a timeout per
 * request, every answer read with a cap after inflation (`maxResponseBytes`, so a compressed bomb from
 * a hostile upstream costs at most that much memory), every exchange timed
 * (docs/decisions/070-clock-offsets.md). The same client uploads blobs and fetches Ranges for it.
 */
export class HttpUpstream implements Upstream {
  readonly client: HopClient;

  constructor(
    readonly name: string,
    url: string,
    /** The token, or a function giving it at each request (a token file re-read on change). */
    token: string | (() => string),
    timeoutMs: number,
    maxResponseBytes = 64 * 1024 * 1024,
    now: () => number = Date.now,
  ) {
    this.client = new HopClient({ url, token, timeoutMs, maxResponseBytes, now });
  }

  /** This relay's clock minus the upstream's; null before the first timed exchange. */
  clock(): ClockEstimate | null {
    return this.client.clock();
  }

  async postBatch(bundles: readonly Uint8Array[], clocks?: ReadonlyMap<string, ClockEstimate>) {
    const r = await this.client.postBatch(encodeBatch(bundles), {
      count: bundles.length,
      ...(clocks ? { sources: clocks } : {}),
    });
    return r.ok ? { ok: true as const, ...r.value } : r;
  }

  async pullDownlink(site: string, after: string | undefined, limit: number) {
    const r = await this.client.pullDownlink(site, after, limit);
    return r.ok ? { ok: true as const, ...r.value } : r;
  }
}
