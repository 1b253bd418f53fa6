import { HopClient, type HopFailure, type HopTransport } from '@driftline/hop/client';
import {
  bundleRef,
  type ClockEstimate,
  decodeBatch,
  formatCustody,
  type Receipt,
  signBytes,
  signCustodyRecord,
  TRUSTED_CLOCK,
} from '@driftline/protocol';
import type { UrlStorage } from 'tus-js-client';
import type { BlobToUpload, DownlinkPage, Uplink, UplinkResult } from '../../ports/Uplink.js';
import { Wire2Link, type Wire2LinkOptions } from './Wire2Link.js';

const ZERO: ClockEstimate = { offsetMs: 0, uncertaintyMs: 0 };

export interface HttpUplinkOptions {
  url: string;
  /** The bearer token, or a function giving it at each request (the token file re-read on change). */
  token: string | (() => string);
  urlStorage: UrlStorage;
  /** Per-request limit. Must exceed the link's round trip (minutes on some links), so it is long by default. */
  requestTimeoutMs?: number;
  /**
   * Most bytes per tus PATCH (default 64 MiB). Not the resume granularity: the server keeps every byte
   * that reached it before a cut and the next attempt resumes from its `Upload-Offset` (FIELD-NOTES, tus).
   */
  chunkSize?: number;
  /**
   * Largest answer read, after fetch has inflated it (default 64 MiB): a compressed bomb from a
   * hostile relay stops here instead of filling memory.
   */
  maxResponseBytes?: number;
  /**
   * A downlink answer that makes no progress this long, or past it comes slower than the floor rate, is
   * cut (`sync.stallS`; docs/decisions/410-independent-downlinks.md). Absent: only the request timeout.
   */
  stallMs?: number;
  /** The agent's clock (its `Clock` port); default `Date.now`. Exchanges are timed with it. */
  now?: () => number;
  /** `site/agent`: the source of this agent's bundles, named in `driftline-source-clocks`. */
  source?: string;
  /** The agent's clock is disciplined (config `clock: trusted`): it reports `trusted`, never an offset. */
  trustedClock?: boolean;
  /**
   * The agent's own key: with `source`, each batch carries the agent's signed custody record (its
   * stamped exchange with the upstream, the bundles it covers; docs/decisions/290-signed-hop-chain.md).
   */
  signKey?: CryptoKey;
  /** Speak hop v2 where the upstream does (`sync.wire: 2`, docs/decisions/495-hop-v2-on-the-agent-link.md). */
  wire2?: Omit<Wire2LinkOptions, 'now'>;
  /** Carry v2 on h2c where the upstream states it (`sync.h2c`, default true; issue 46). */
  h2c?: boolean;
  /** What carries the exchanges (default: sockets; a deterministic world's links in simulation). */
  transport?: HopTransport;
}

/** Most bundles one record names (a record stays well under the header's cap). */
const MAX_RECORD_BUNDLES = 128;

/** A hop client failure as the agent's port states it (`error` is the message a person reads). */
const asUplink = (f: HopFailure): UplinkResult<never> => ({
  ok: false,
  error: f.message,
  retryable: f.retryable,
  ...(f.status === undefined ? {} : { status: f.status }),
  ...(f.code === 'stalled' ? { stalled: true } : {}),
});

/** The hop API over HTTP for the agent: hop's client (fetch for bundles and downlink, tus for blobs). */
export class HttpUplink implements Uplink {
  readonly url: string;
  private readonly client: HopClient;
  private readonly wire2: Wire2Link | null;

  constructor(private readonly opts: HttpUplinkOptions) {
    this.client = new HopClient({
      url: opts.url,
      token: opts.token,
      timeoutMs: opts.requestTimeoutMs ?? 30 * 60_000,
      ...(opts.maxResponseBytes ? { maxResponseBytes: opts.maxResponseBytes } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.stallMs !== undefined ? { stallMs: opts.stallMs } : {}),
      trustedClock: opts.trustedClock ?? false,
      h2c: opts.h2c ?? true,
      onWire2Carrier: (c) => opts.wire2?.state.noteCarrier(this.url, c),
      ...(opts.transport ? { transport: opts.transport } : {}),
    });
    this.url = this.client.url;
    this.wire2 = opts.wire2 ? new Wire2Link(this.client, { ...opts.wire2, now: opts.now ?? Date.now }) : null;
  }

  /** This agent's clock minus the upstream's (docs/decisions/070-clock-offsets.md); null before an exchange. */
  clock(): ClockEstimate | null {
    return this.client.clock();
  }

  /** The agent's stop: every exchange in progress ends `aborted` (`HopClient.abort`), uploads pause. */
  abort(): void {
    this.client.abort();
  }

  async probe(): Promise<UplinkResult<void>> {
    const r = await this.client.probe();
    return r.ok ? r : asUplink(r);
  }

  async postBundles(batch: Uint8Array): Promise<UplinkResult<Receipt[]>> {
    const v2 = await this.wire2?.push(batch);
    if (v2) return v2;
    // The bundles' source is this agent: its clock minus the sender's is nothing (or trusted).
    const sources = this.opts.source
      ? new Map([[this.opts.source, this.opts.trustedClock ? TRUSTED_CLOCK : ZERO]])
      : undefined;
    const custody = await this.custodyRecord(batch);
    const r = await this.client.postBatch(batch, {
      ...(sources ? { sources } : {}),
      ...(custody ? { custody } : {}),
    });
    return r.ok ? { ok: true, value: r.value.receipts } : asUplink(r);
  }

  /**
   * The agent's signed record for a batch: the exchange with the upstream it measured (stamped by that
   * upstream), or `trusted`. On the first push after a start, before any exchange, `up` is null: the
   * hub bounds the plain estimate as before (decision 230) and knows the record was not stripped on the
   * way. None to an upstream that answers without stamps (an older relay, the hub): bytes for nothing.
   */
  private async custodyRecord(batch: Uint8Array): Promise<string | null> {
    const { signKey, source } = this.opts;
    const up = this.client.stampedExchange();
    if (!signKey || !source) return null;
    // an upstream that times exchanges but stamps none (an older relay, the hub): nothing to sign for it.
    // One that stamps, with no exchange left since this clock was stepped or skewed, gets `up: null`: the
    // hub then reads the plain estimate, which follows the clock (docs/decisions/550-clock-moved-since-its-sample.md)
    if (!up && !this.opts.trustedClock && this.client.clock() !== null && !this.client.stamps()) return null;
    const bundles = decodeBatch(batch);
    if (!bundles.ok || bundles.value.length === 0) return null;
    const refs = await Promise.all(bundles.value.slice(0, MAX_RECORD_BUNDLES).map(bundleRef));
    const record = await signCustodyRecord(
      {
        v: 1,
        role: 'agent',
        signer: source,
        at: (this.opts.now ?? Date.now)(),
        up,
        ...(this.opts.trustedClock ? { trusted: true as const } : {}),
        bundles: refs,
      },
      (data) => signBytes(signKey, data),
    );
    return formatCustody([record]) || null;
  }

  async pullDownlink(
    site: string,
    after: string | undefined,
    hold?: { waitS: number; signal?: AbortSignal; holder?: string },
  ): Promise<UplinkResult<DownlinkPage>> {
    const v2 = await this.wire2?.pull(after, hold);
    if (v2) return v2;
    const r = await this.client.pullDownlink(site, after, undefined, hold);
    return r.ok
      ? {
          ok: true,
          value: {
            bundles: r.value.bundles,
            cursor: r.value.cursor,
            ...(r.value.held ? { held: true, keep: r.value.keep } : {}),
            ...(r.value.heldS !== undefined ? { heldS: r.value.heldS } : {}),
            ...(r.value.holdMaxS !== undefined ? { holdMaxS: r.value.holdMaxS } : {}),
            ...(r.value.refusals.length > 0 ? { refusals: r.value.refusals } : {}),
          },
        }
      : asUplink(r);
  }

  async uploadBlob(
    blob: BlobToUpload,
    onProgress?: (sent: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<UplinkResult<void>> {
    const r = await this.client.upload({
      sha256: blob.sha256,
      size: blob.size,
      body: Buffer.from(blob.data.buffer, blob.data.byteOffset, blob.data.byteLength),
      metadata: { contentType: blob.contentType, ...(blob.runId ? { runId: blob.runId } : {}) },
      urlStorage: this.opts.urlStorage,
      // 8 MiB cost 0.03 of the link's rate on 200 MB at 4 MB/s with a 40 ms round trip (bench transfer).
      chunkSize: this.opts.chunkSize ?? 64 * 1024 * 1024,
      ...(onProgress ? { onProgress } : {}),
      ...(signal ? { signal } : {}),
    });
    return r.ok ? r : asUplink(r);
  }
}
