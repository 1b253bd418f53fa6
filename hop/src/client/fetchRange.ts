import type { HopTransport } from './hopTransport.js';
import { failure, type HopFailure, thrown } from './result.js';

/** Where fetched bytes go: each chunk is written (and awaited) before the next is read. */
export interface RangeSink {
  write(chunk: Uint8Array): Promise<unknown>;
}

/** How far a Range fetch got: `offset` is the next byte wanted, `bytes` what arrived (cut or not). */
export type RangeResult =
  | { ok: true; offset: number; bytes: number }
  | (HopFailure & { offset: number; bytes: number });

/**
 * `GET <blobUrl>` with `Range: bytes=start-end` and `If-Range` on the blob's hash (its strong ETag),
 * written to `sink` as it arrives, so a drop costs only what was in flight. Never more than
 * `end - start + 1` bytes are written: an answer that goes on (or inflates) is cut off there. An answer
 * that ends early is `ok` with the offset it reached; the caller asks again from there.
 * A 404 is retryable: the upstream may not hold the blob yet.
 */
export async function fetchRange(
  blobUrl: string,
  token: string,
  sha256: string,
  start: number,
  end: number,
  sink: RangeSink,
  signal: AbortSignal,
  transport?: HopTransport,
): Promise<RangeResult> {
  let offset = start;
  let bytes = 0;
  try {
    const headers = {
      authorization: `Bearer ${token}`,
      range: `bytes=${start}-${end}`,
      'if-range': `"${sha256}"`,
    };
    const res = transport
      ? await transport.request(blobUrl, { method: 'GET', headers, signal })
      : await fetch(blobUrl, { headers, signal });
    if (res.status !== 206 && !(res.status === 200 && start === 0)) {
      await res.body?.cancel();
      const held = res.status === 404 ? ' (the upstream does not hold it yet)' : '';
      const retryable = res.status === 404 || res.status >= 500 || res.status === 408 || res.status === 429;
      return {
        ...failure('http-error', `HTTP ${res.status} for the blob${held}`, retryable, res.status),
        offset,
        bytes,
      };
    }
    const want = end + 1;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const part = offset + chunk.length > want ? chunk.subarray(0, want - offset) : chunk;
      await sink.write(part);
      offset += part.length;
      bytes += chunk.length;
      if (offset >= want) break;
    }
    return { ok: true, offset, bytes };
  } catch (e) {
    return { ...thrown(e, 'blob fetch interrupted'), offset, bytes };
  }
}
