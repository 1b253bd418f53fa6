import { HopClient, type HopTransport } from '@driftline/hop/client';
import {
  bundleRef,
  type ClockEstimate,
  encodeBatch,
  formatCustody,
  signCustodyRecord,
} from '@driftline/protocol';
import type { CustodyChains } from '../../core/custodyChains.js';
import type { Upstream } from '../../ports/Upstream.js';
import type { RelayKey } from '../fs/relayKey.js';

/** Most bundles one record names (a record stays well under the header's cap). */
const MAX_RECORD_BUNDLES = 128;

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
    private readonly now: () => number = Date.now,
    /** The relay's key and the records its bundles came with: each batch carries the chain (decision 290). */
    private readonly signing?: { key: RelayKey; chains: CustodyChains },
    /**
     * An answer that does not begin within the measured round trip, this and its bytes at 128 B/s is cut as
     * stalled (`forward.stallS`; docs/decisions/535-relay-cuts-a-stalled-upstream.md); unset: the timeout.
     */
    stallMs?: number,
    /** What carries the exchanges (default: sockets; a deterministic world's links in simulation). */
    transport?: HopTransport,
  ) {
    this.client = new HopClient({
      url,
      token,
      timeoutMs,
      maxResponseBytes,
      now,
      ...(stallMs === undefined ? {} : { stallMs }),
      ...(transport ? { transport } : {}),
    });
  }

  /**
   * The custody header of a batch: the records its bundles came with, then this relay's own, signed:
   * its exchange with this upstream (as the upstream stamped it, when it does), when it took the
   * bundles and how long it held them. None when the bundles came with no records (an older agent).
   */
  private async custody(bundles: readonly Uint8Array[]): Promise<{ header: string; refs: string[] } | null> {
    if (!this.signing) return null;
    const refs = await Promise.all(bundles.map(bundleRef));
    const { records, tookAt } = this.signing.chains.of(refs);
    if (records.length === 0) return null;
    const at = this.now();
    const own = await signCustodyRecord(
      {
        v: 1,
        role: 'relay',
        signer: this.signing.key.publicKey,
        at,
        up: this.client.stampedExchange(),
        ...(tookAt === null ? {} : { tookAt, residenceMs: Math.max(0, at - tookAt) }),
        bundles: refs.slice(0, MAX_RECORD_BUNDLES),
      },
      this.signing.key.sign,
    );
    return { header: formatCustody([...records, own]), refs };
  }

  /** This relay's clock minus the upstream's; null before the first timed exchange. */
  clock(): ClockEstimate | null {
    return this.client.clock();
  }

  async postBatch(bundles: readonly Uint8Array[], clocks?: ReadonlyMap<string, ClockEstimate>) {
    const custody = await this.custody(bundles);
    const r = await this.client.postBatch(encodeBatch(bundles), {
      count: bundles.length,
      ...(clocks ? { sources: clocks } : {}),
      ...(custody ? { custody: custody.header } : {}),
    });
    if (r.ok && custody) this.signing?.chains.forget(custody.refs);
    return r.ok ? { ok: true as const, ...r.value } : r;
  }

  async pullDownlink(site: string, after: string | undefined, limit: number) {
    const r = await this.client.pullDownlink(site, after, limit);
    return r.ok ? { ok: true as const, ...r.value } : r;
  }

  async watchDownlink(cursors: ReadonlyMap<string, string>, waitS: number, signal?: AbortSignal) {
    const r = await this.client.watchDownlink(cursors, waitS, signal);
    return r.ok ? { ok: true as const, ...r.value } : r;
  }
}
