import { HopClient, type HopTransport } from '@driftline/hop/client';
import type { BlobSource, PublicationFiles } from '../../core/publications/ports.js';

/**
 * Range requests to `GET /v1/blobs/:sha256` at the agent's upstreams, in order, through hop's client.
 * Every byte that arrives is appended before the next is read, so a drop costs only what was in flight.
 */
export class HttpBlobSource implements BlobSource {
  private readonly clients: HopClient[];

  constructor(
    upstreams: readonly { url: string; token: string | (() => string); transport?: HopTransport }[],
    timeoutMs = 30 * 60_000,
  ) {
    this.clients = upstreams.map(
      (u) =>
        new HopClient({
          url: u.url,
          token: u.token,
          timeoutMs,
          ...(u.transport ? { transport: u.transport } : {}),
        }),
    );
  }

  async fetchInto(sha: string, start: number, end: number, files: PublicationFiles) {
    let offset = start;
    const errors: string[] = [];
    for (const client of this.clients) {
      const out = await files.openAppend(sha);
      try {
        const r = await client.fetchRange(sha, offset, end, out);
        offset = r.offset;
        if (!r.ok) errors.push(`${client.url}: ${r.message}`);
        else if (offset > end) return { ok: true as const, offset };
        else errors.push(`${client.url}: the answer ended at ${offset} of ${end + 1} bytes`);
      } finally {
        await out.close();
      }
    }
    return { ok: false as const, offset, error: errors.join('; ') };
  }
}
