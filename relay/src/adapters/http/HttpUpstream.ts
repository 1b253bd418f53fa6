import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import {
  BATCH_CONTENT_TYPE,
  CURSOR_HEADER,
  decodeBatch,
  encodeBatch,
  ReceiptsResponseSchema,
} from '@driftline/protocol';
import type { Upstream, UpstreamFailure } from '../../ports/Upstream.js';

/** An upstream over HTTP: brotli-compressed batches, bearer token, a timeout per request. */
export class HttpUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly url: string,
    private readonly token: string,
    private readonly timeoutMs: number,
  ) {}

  async postBatch(bundles: readonly Uint8Array[]) {
    const body = brotliCompressSync(encodeBatch(bundles));
    const r = await this.request(`${this.url}/v1/bundles`, {
      method: 'POST',
      headers: { 'content-type': BATCH_CONTENT_TYPE, 'content-encoding': 'br' },
      body,
    });
    if (!r.ok) return r;
    const parsed = ReceiptsResponseSchema.safeParse(await r.res.json().catch(() => null));
    if (!parsed.success || parsed.data.receipts.length !== bundles.length) {
      return { ok: false as const, reason: 'upstream answered without one receipt per bundle' };
    }
    return { ok: true as const, receipts: parsed.data.receipts, bytes: body.length };
  }

  async pullDownlink(site: string, after: string | undefined, limit: number) {
    const q = new URLSearchParams({ for: site, limit: String(limit), ...(after ? { after } : {}) });
    const r = await this.request(`${this.url}/v1/bundles?${q}`, { headers: { 'accept-encoding': 'br' } });
    if (!r.ok) return r;
    const raw = new Uint8Array(await r.res.arrayBuffer());
    // fetch decodes br itself; a raw brotli body only arrives from a client that did not
    const bytes = raw[0] === 0x44 ? raw : new Uint8Array(brotliDecompressSync(raw));
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
      const res = await fetch(url, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${this.token}` },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (res.ok) return { ok: true, res };
      const body = (await res.json().catch(() => null)) as {
        error?: { code?: string; message?: string };
      } | null;
      return {
        ok: false,
        status: res.status,
        code: body?.error?.code,
        reason: `${this.name} answered ${res.status}${body?.error?.message ? `: ${body.error.message}` : ''}`,
      };
    } catch (e) {
      return { ok: false, reason: `${this.name} unreachable: ${(e as Error).message}` };
    }
  }
}
