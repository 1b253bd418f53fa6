import { brotliCompressSync } from 'node:zlib';
import {
  answerSample,
  BATCH_CONTENT_TYPE,
  CLOCK_HEADER,
  CLOCK_SENT_HEADER,
  type ClockEstimate,
  ClockFilter,
  CURSOR_HEADER,
  decodeBatch,
  formatClock,
  formatSourceClocks,
  type Receipt,
  ReceiptsResponseSchema,
  readCapped,
  readCappedText,
  SOURCE_CLOCKS_HEADER,
  TRUSTED_CLOCK,
} from '@driftline/protocol';
import { Upload, type UrlStorage } from 'tus-js-client';
import type { BlobToUpload, Uplink, UplinkResult } from '../../ports/Uplink.js';

const ZERO: ClockEstimate = { offsetMs: 0, uncertaintyMs: 0 };

/** Error bodies and receipts are small JSON; more is not read. */
const SMALL_BODY_CAP = 4 * 1024 * 1024;

export interface HttpUplinkOptions {
  url: string;
  token: string;
  urlStorage: UrlStorage;
  /** Per-request limit. Must exceed the link's round trip (minutes on some links), so it is long by default. */
  requestTimeoutMs?: number;
  /**
   * Most bytes per tus PATCH (default 64 MiB). Not the resume granularity: the server keeps every byte
   * that reached it before a cut and the next attempt resumes from its `Upload-Offset` (FIELD-NOTES, tus).
   * Each PATCH ends with a round trip in which nothing is sent, so small chunks waste the link; the cap
   * only keeps a single request below body limits of proxies in front of a hop.
   */
  chunkSize?: number;
  /**
   * Largest downlink page read, after fetch has inflated it (default 64 MiB): a compressed bomb from a
   * hostile relay stops here instead of filling memory.
   */
  maxResponseBytes?: number;
  /** The agent's clock (its `Clock` port); default `Date.now`. Exchanges are timed with it. */
  now?: () => number;
  /** `site/agent`: the source of this agent's bundles, named in `driftline-source-clocks`. */
  source?: string;
  /** The agent's clock is disciplined (config `clock: trusted`): it reports `trusted`, never an offset. */
  trustedClock?: boolean;
}

/** The hop API over HTTP: fetch for bundles and downlink, tus-js-client for blobs. */
export class HttpUplink implements Uplink {
  readonly url: string;
  private readonly timeout: number;
  private readonly now: () => number;
  /** This agent's clock minus the upstream's, from the times of every exchange (NTP's clock filter). */
  private readonly filter = new ClockFilter();

  constructor(private readonly opts: HttpUplinkOptions) {
    this.url = opts.url.replace(/\/+$/, '');
    this.timeout = opts.requestTimeoutMs ?? 30 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** This agent's clock minus the upstream's (docs/decisions/070-clock-offsets.md); null before an exchange. */
  clock(): ClockEstimate | null {
    return this.opts.trustedClock ? TRUSTED_CLOCK : this.filter.best(this.now());
  }

  private async request(path: string, init: RequestInit): Promise<UplinkResult<Response>> {
    try {
      const own = this.clock();
      const t0 = this.now();
      const res = await fetch(`${this.url}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${this.opts.token}`,
          [CLOCK_SENT_HEADER]: String(t0),
          ...(own ? { [CLOCK_HEADER]: formatClock(own) } : {}),
          ...(init.headers ?? {}),
        },
        signal: AbortSignal.timeout(this.timeout),
      });
      // fetch resolves when the answer's headers arrive: t3, before any body is read.
      const sample = answerSample(t0, res.headers, this.now());
      if (sample) this.filter.add(sample);
      if (res.ok) return { ok: true, value: res };
      const read = await readCappedText(res, 64 * 1024);
      const body = read.ok ? read.text : '';
      let message = read.ok ? body.slice(0, 300) : `(error body not read: ${read.reason})`;
      try {
        const parsed = JSON.parse(body) as { error?: { code?: string; message?: string } };
        if (parsed.error) message = `${parsed.error.code}: ${String(parsed.error.message).slice(0, 500)}`;
      } catch {}
      const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
      return { ok: false, status: res.status, retryable, error: `HTTP ${res.status} ${message}` };
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code;
      return { ok: false, retryable: true, error: `${(e as Error).message}${cause ? ` (${cause})` : ''}` };
    }
  }

  async probe(): Promise<UplinkResult<void>> {
    const r = await this.request('/v1/health', { method: 'GET' });
    if (!r.ok) return r;
    await readCapped(r.value, 64 * 1024);
    return { ok: true, value: undefined };
  }

  async postBundles(batch: Uint8Array): Promise<UplinkResult<Receipt[]>> {
    const body = brotliCompressSync(batch);
    const r = await this.request('/v1/bundles', {
      method: 'POST',
      headers: {
        'content-type': BATCH_CONTENT_TYPE,
        'content-encoding': 'br',
        // The bundles' source is this agent: its clock minus the sender's is nothing (or trusted).
        ...(this.opts.source
          ? {
              [SOURCE_CLOCKS_HEADER]: formatSourceClocks(
                new Map([[this.opts.source, this.opts.trustedClock ? TRUSTED_CLOCK : ZERO]]),
              ),
            }
          : {}),
      },
      body,
    });
    if (!r.ok) return r;
    const read = await readCappedText(r.value, SMALL_BODY_CAP);
    let json: unknown = null;
    try {
      json = read.ok ? JSON.parse(read.text) : null;
    } catch {}
    const parsed = ReceiptsResponseSchema.safeParse(json);
    if (!parsed.success)
      return { ok: false, retryable: true, error: 'upstream answered something that is not a receipt list' };
    return { ok: true, value: parsed.data.receipts };
  }

  async pullDownlink(
    site: string,
    after: string | undefined,
  ): Promise<UplinkResult<{ bundles: Uint8Array[]; cursor: string }>> {
    const q = new URLSearchParams({ for: site });
    if (after) q.set('after', after);
    const r = await this.request(`/v1/bundles?${q}`, {
      method: 'GET',
      headers: { accept: BATCH_CONTENT_TYPE },
    });
    if (!r.ok) return r;
    const read = await readCapped(r.value, this.opts.maxResponseBytes ?? 64 * 1024 * 1024);
    if (!read.ok) return { ok: false, retryable: true, error: `downlink refused: ${read.reason}` };
    const batch = decodeBatch(read.bytes);
    if (!batch.ok)
      return { ok: false, retryable: true, error: `downlink is not a batch: ${batch.error.message}` };
    return {
      ok: true,
      value: { bundles: batch.value, cursor: r.value.headers.get(CURSOR_HEADER) ?? after ?? '0' },
    };
  }

  uploadBlob(
    blob: BlobToUpload,
    onProgress?: (sent: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<UplinkResult<void>> {
    return new Promise((resolve) => {
      const upload = new Upload(Buffer.from(blob.data.buffer, blob.data.byteOffset, blob.data.byteLength), {
        endpoint: `${this.url}/v1/uploads/`,
        headers: { authorization: `Bearer ${this.opts.token}` },
        metadata: {
          sha256: blob.sha256,
          contentType: blob.contentType,
          ...(blob.runId ? { runId: blob.runId } : {}),
        },
        uploadSize: blob.size,
        // 8 MiB cost 0.03 of the link's rate on 200 MB at 4 MB/s with a 40 ms round trip (bench transfer).
        chunkSize: this.opts.chunkSize ?? 64 * 1024 * 1024,
        // Retrying is the agent loop's job: a link may be down for hours (FIELD-NOTES).
        retryDelays: null,
        urlStorage: this.opts.urlStorage,
        fingerprint: async () => `${this.url}|${blob.sha256}`,
        storeFingerprintForResuming: true,
        removeFingerprintOnSuccess: true,
        onProgress: (sent, total) => onProgress?.(sent, total),
        onSuccess: () => resolve({ ok: true, value: undefined }),
        onError: (e) =>
          resolve({
            ok: false,
            retryable: true,
            error: `upload of ${blob.sha256.slice(0, 12)}…: ${e.message.split('\n')[0]}`,
          }),
      });
      signal?.addEventListener('abort', () => {
        // Keep the upload on the server and its URL in storage: the next attempt resumes from its offset.
        void upload.abort(false);
        resolve({ ok: false, retryable: true, error: 'upload aborted' });
      });
      upload
        .findPreviousUploads()
        .then((previous) => {
          if (previous[0]) upload.resumeFromPreviousUpload(previous[0]);
          upload.start();
        })
        .catch((e: Error) => resolve({ ok: false, retryable: true, error: e.message }));
    });
  }
}
