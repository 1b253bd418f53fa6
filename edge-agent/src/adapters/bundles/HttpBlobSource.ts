import type { BlobSource, BundleFiles } from '../../core/bundles/ports.js';

/**
 * Range requests to `GET /v1/blobs/:sha256` at the agent's upstreams, in order. Every byte that
 * arrives is appended before the next is read, so a drop costs only what was in flight.
 */
export class HttpBlobSource implements BlobSource {
  constructor(
    private readonly upstreams: readonly { url: string; token: string }[],
    private readonly timeoutMs = 30 * 60_000,
  ) {}

  async fetchInto(sha: string, start: number, end: number, files: BundleFiles) {
    let offset = start;
    const errors: string[] = [];
    for (const up of this.upstreams) {
      const out = await files.openAppend(sha);
      try {
        const res = await fetch(`${up.url.replace(/\/+$/, '')}/v1/blobs/${sha}`, {
          headers: {
            authorization: `Bearer ${up.token}`,
            range: `bytes=${offset}-${end}`,
            'if-range': `"${sha}"`,
          },
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        if (res.status !== 206 && !(res.status === 200 && offset === 0)) {
          await res.body?.cancel();
          errors.push(
            `${up.url}: HTTP ${res.status}${res.status === 404 ? ' (the relay does not hold it yet)' : ''}`,
          );
          continue;
        }
        const want = end + 1;
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          const part = offset + chunk.length > want ? chunk.subarray(0, want - offset) : chunk;
          await out.write(part);
          offset += part.length;
          // Stop reading at the announced size: a body that goes on (or inflates) is not ours to drain.
          if (offset >= want) break;
        }
        if (offset >= want) return { ok: true as const, offset };
        errors.push(`${up.url}: the answer ended at ${offset} of ${want} bytes`);
      } catch (e) {
        errors.push(`${up.url}: ${(e as Error).message}`);
      } finally {
        await out.close();
      }
    }
    return { ok: false as const, offset, error: errors.join('; ') };
  }
}
