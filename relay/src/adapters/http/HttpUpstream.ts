import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import {
  answerSample,
  BATCH_CONTENT_TYPE,
  CLOCK_HEADER,
  CLOCK_SENT_HEADER,
  type ClockEstimate,
  ClockFilter,
  CURSOR_HEADER,
  decodeBatch,
  encodeBatch,
  formatClock,
  formatSourceClocks,
  ReceiptsResponseSchema,
  readCapped,
  readCappedJson,
  SOURCE_CLOCKS_HEADER,
} from '@driftline/protocol';
import type { Upstream, UpstreamFailure } from '../../ports/Upstream.js';

/** Error bodies are a line of JSON; more is not read. */
const ERROR_BODY_CAP = 64 * 1024;

/**
 * An upstream over HTTP: brotli-compressed batches, bearer token, a timeout per request. Every
 * response body is read with a cap after inflation (`maxResponseBytes`), so a compressed bomb from a
 * hostile upstream costs at most that much memory. Every exchange is timed (docs/decisions/070-clock-offsets.md):
 * the relay's clock minus the upstream's goes up with each request, and each source's clock with a batch.
 */
export class HttpUpstream implements Upstream {
  /** This relay's clock minus the upstream's, from the times of every exchange (NTP's clock filter). */
  private readonly filter = new ClockFilter();

  constructor(
    readonly name: string,
    private readonly url: string,
    private readonly token: string,
    private readonly timeoutMs: number,
    private readonly maxResponseBytes = 64 * 1024 * 1024,
    private readonly now: () => number = Date.now,
  ) {}

  /** This relay's clock minus the upstream's; null before the first timed exchange. */
  clock(): ClockEstimate | null {
    return this.filter.best(this.now());
  }

  async postBatch(bundles: readonly Uint8Array[], clocks?: ReadonlyMap<string, ClockEstimate>) {
    const body = brotliCompressSync(encodeBatch(bundles));
    const sources = clocks && clocks.size > 0 ? formatSourceClocks(clocks) : '';
    const r = await this.request(`${this.url}/v1/bundles`, {
      method: 'POST',
      headers: {
        'content-type': BATCH_CONTENT_TYPE,
        'content-encoding': 'br',
        ...(sources ? { [SOURCE_CLOCKS_HEADER]: sources } : {}),
      },
      body,
    });
    if (!r.ok) return r;
    const parsed = ReceiptsResponseSchema.safeParse(await readCappedJson(r.res, this.maxResponseBytes));
    if (!parsed.success || parsed.data.receipts.length !== bundles.length) {
      return { ok: false as const, reason: 'upstream answered without one receipt per bundle' };
    }
    return { ok: true as const, receipts: parsed.data.receipts, bytes: body.length };
  }

  async pullDownlink(site: string, after: string | undefined, limit: number) {
    const q = new URLSearchParams({ for: site, limit: String(limit), ...(after ? { after } : {}) });
    const r = await this.request(`${this.url}/v1/bundles?${q}`, { headers: { 'accept-encoding': 'br' } });
    if (!r.ok) return r;
    const read = await readCapped(r.res, this.maxResponseBytes);
    if (!read.ok)
      return {
        ok: false as const,
        reason: `upstream downlink unreadable: ${read.reason} (limits.maxResponseBytes)`,
      };
    const raw = read.bytes;
    let bytes = raw;
    // fetch decodes br itself; a raw brotli body only arrives from a client that did not
    if (raw[0] !== 0x44) {
      try {
        bytes = new Uint8Array(brotliDecompressSync(raw, { maxOutputLength: this.maxResponseBytes }));
      } catch (e) {
        return { ok: false as const, reason: `upstream downlink unreadable: ${(e as Error).message}` };
      }
    }
    const batch = decodeBatch(bytes);
    const cursor = r.res.headers.get(CURSOR_HEADER);
    if (!batch.ok || !cursor)
      return {
        ok: false as const,
        reason: `upstream downlink unreadable: ${batch.ok ? 'no cursor' : batch.error.message}`,
      };
    return { ok: true as const, bundles: batch.value, cursor, bytes: raw.length };
  }

  private async request(
    url: string,
    init: RequestInit,
  ): Promise<{ ok: true; res: Response } | UpstreamFailure> {
    try {
      const own = this.clock();
      const t0 = this.now();
      const res = await fetch(url, {
        ...init,
        headers: {
          ...(init.headers as Record<string, string>),
          authorization: `Bearer ${this.token}`,
          [CLOCK_SENT_HEADER]: String(t0),
          ...(own ? { [CLOCK_HEADER]: formatClock(own) } : {}),
        },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      // fetch resolves when the answer's headers arrive: t3, before any body is read.
      const sample = answerSample(t0, res.headers, this.now());
      if (sample) this.filter.add(sample);
      if (res.ok) return { ok: true, res };
      const read = await readCapped(res, ERROR_BODY_CAP);
      let body: { error?: { code?: string; message?: string } } | null = null;
      try {
        body = read.ok ? JSON.parse(new TextDecoder().decode(read.bytes)) : null;
      } catch {}
      const message = body?.error?.message ? `: ${String(body.error.message).slice(0, 500)}` : '';
      return {
        ok: false,
        status: res.status,
        code: typeof body?.error?.code === 'string' ? body.error.code : undefined,
        reason: `${this.name} answered ${res.status}${message}${read.ok ? '' : ` (error body not read: ${read.reason})`}`,
      };
    } catch (e) {
      return { ok: false, reason: `${this.name} unreachable: ${(e as Error).message}` };
    }
  }
}
