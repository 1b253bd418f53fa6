import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { actsFor, type HopBackend, MemoryHopBackend, type Peer, type SourceClocks } from '@driftline/hop';
import { retryableStatus } from '@driftline/hop/client';
import {
  type ClockEstimate,
  DownlinkQuerySchema,
  decodeBatch,
  type ErrorCode,
  type Receipt,
  renderError,
  Sha256Schema,
  TRUSTED_CLOCK,
  WireError,
} from '@driftline/protocol';
import type { BlobToUpload, Uplink, UplinkResult } from '../../ports/Uplink.js';

/** The token a default `MemoryUplink` uses; its terminal knows it as site `ship-7`'s. */
export const MEMORY_UPLINK_TOKEN = 'memory-uplink-token';

/** A same-process link: no delay, one clock, so this agent's clock minus the upstream's is nothing. */
const SAME_CLOCK: ClockEstimate = { offsetMs: 0, uncertaintyMs: 0 };

export interface MemoryUplinkOptions {
  /** The upstream's node; default a `MemoryHopBackend` hub knowing `MEMORY_UPLINK_TOKEN` for `ship-7`. */
  backend?: HopBackend;
  token?: string;
  /** `site/agent`: the source of this agent's bundles, sent with each batch as `HttpUplink` sends it. */
  source?: string;
  /** The agent's clock is disciplined: its bundles' source clock is `trusted`. */
  trustedClock?: boolean;
}

/**
 * An upstream in the same process, for tests of what the agent sends and pulls: batches, the downlink
 * and blobs go straight to a `HopBackend` as `HttpUplink` reaches one through a hop server, with the
 * same answers and failure shapes — `unauthorized` (401) for a token the backend does not know,
 * `forbidden` (403) for a site the token does not cover, a batch that is not one refused (400), a
 * blob whose bytes do not hash to its name refused (460), a backend's `WireError` by its status, any
 * other throw as `internal` (500), 503 from `probe` while the backend is not ready, and `unreachable`
 * (retryable, no status) while `down`. Both pass `runUplinkContract`. A blob goes to the backend's
 * `uploadFinished` through a temporary file, as hop's tus endpoint hands it over; uploads are whole
 * (nothing to resume). It records every batch posted (`batches`).
 */
export class MemoryUplink implements Uplink {
  readonly url: string;
  readonly backend: HopBackend;
  /** While true, every request fails as a link that is down does (`unreachable`, retryable). */
  down = false;
  /** Every batch posted while up, as sent, whatever the backend answered. */
  readonly batches: Uint8Array[] = [];
  private readonly token: string;

  constructor(private readonly opts: MemoryUplinkOptions = {}) {
    if (opts.backend) this.backend = opts.backend;
    else {
      const terminal = new MemoryHopBackend({ name: 'hub', role: 'hub' });
      terminal.addToken(MEMORY_UPLINK_TOKEN, { name: 'ship-7', sites: ['ship-7'] });
      this.backend = terminal;
    }
    this.token = opts.token ?? MEMORY_UPLINK_TOKEN;
    this.url = `memory://${this.backend.name}`;
  }

  async probe(): Promise<UplinkResult<void>> {
    if (this.down) return this.unreachable();
    const h = await this.backend.health();
    return h.ok ? { ok: true, value: undefined } : failed('unavailable', h.detail);
  }

  async postBundles(batch: Uint8Array): Promise<UplinkResult<Receipt[]>> {
    return this.call(async (peer) => {
      this.batches.push(batch.slice());
      const bundles = decodeBatch(batch);
      if (!bundles.ok) throw new WireError(bundles.error.code, bundles.error.message);
      return this.backend.accept(peer, bundles.value, this.sourceClocks());
    });
  }

  async pullDownlink(
    site: string,
    after: string | undefined,
  ): Promise<UplinkResult<{ bundles: Uint8Array[]; cursor: string }>> {
    return this.call(async (peer) => {
      const q = DownlinkQuerySchema.safeParse({ for: site, ...(after ? { after } : {}) });
      if (!q.success) {
        const first = q.error.issues[0];
        throw new WireError('bad-query', `'${first?.path.join('.') || '?'}': ${first?.message ?? 'invalid'}`);
      }
      if (!actsFor(peer, site))
        throw new WireError('forbidden', `peer '${peer.name}' may not pull downlink for site '${site}'`);
      const r = await this.backend.downlink(peer, q.data);
      return { bundles: r.bundles, cursor: r.cursor };
    });
  }

  async uploadBlob(
    blob: BlobToUpload,
    onProgress?: (sent: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<UplinkResult<void>> {
    const what = `upload of ${blob.sha256.slice(0, 12)}…`;
    if (signal?.aborted) return { ok: false, error: `${what}: aborted`, retryable: true };
    return this.call(async (peer) => {
      if (!Sha256Schema.safeParse(blob.sha256).success)
        throw new WireError(
          'bad-request',
          'Upload-Metadata must carry sha256 (64 lowercase hex) of the whole file',
        );
      const actual = createHash('sha256').update(blob.data).digest('hex');
      onProgress?.(blob.size, blob.size);
      if (actual !== blob.sha256)
        throw new WireError('checksum-mismatch', `the upload hashes to ${actual}, not ${blob.sha256}`);
      const dir = await mkdtemp(join(tmpdir(), 'driftline-memory-uplink-'));
      try {
        const path = join(dir, 'upload');
        await writeFile(path, blob.data);
        const metadata = { contentType: blob.contentType, ...(blob.runId ? { runId: blob.runId } : {}) };
        await this.backend.uploadFinished(peer, { path, size: blob.data.length, sha256: actual, metadata });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  /** What a hop server makes of the source clock sent with a batch: trusted stays, the rest composed with ~0. */
  private sourceClocks(): SourceClocks | undefined {
    const source = this.opts.source;
    if (!source) return undefined;
    const own = this.opts.trustedClock ? TRUSTED_CLOCK : SAME_CLOCK;
    return (s) => (s === source ? own : null);
  }

  private unreachable(): UplinkResult<never> {
    return { ok: false, error: `unreachable: upstream '${this.url}' is down`, retryable: true };
  }

  /** Runs one request as a hop server would: authenticated, every error turned into a failure. */
  private async call<T>(fn: (peer: Peer) => Promise<T>): Promise<UplinkResult<T>> {
    if (this.down) return this.unreachable();
    try {
      const peer = await this.backend.authenticate(this.token);
      if (!peer) throw new WireError('unauthorized', 'the bearer token is unknown or revoked');
      return { ok: true, value: await fn(peer) };
    } catch (e) {
      return failed(
        e instanceof WireError ? e.code : 'internal',
        e instanceof WireError ? e.detail : undefined,
      );
    }
  }
}

/** A failure as `HttpUplink` reports an error answer: `HTTP <status> <code>: <message>`. */
function failed(code: ErrorCode, detail?: string): UplinkResult<never> {
  const r = renderError(code, detail);
  return {
    ok: false,
    error: `HTTP ${r.status} ${code}: ${r.body.error.message}`,
    retryable: retryableStatus(r.status),
    status: r.status,
  };
}
