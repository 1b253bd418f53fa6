import { brotliDecompressSync } from 'node:zlib';
import { CURSOR_HEADER, decodeBatch, type Progress, readCapped } from '@driftline/protocol';
import { failure, type HopResult } from './result.js';

/**
 * The body of a downlink pull's answer (`GET /v1/bundles`): read with a cap (and, with `progress`, cut
 * when it stalls), a raw brotli body inflated with the same cap, then decoded as a batch with its cursor.
 */
export async function readDownlinkAnswer(
  res: Response,
  url: string,
  maxBytes: number,
  progress: Progress | undefined,
): Promise<HopResult<{ bundles: Uint8Array[]; cursor: string; bytes: number }>> {
  const unreadable = (why: string) =>
    failure('bad-answer', `downlink unreadable: ${why} (maxResponseBytes)`, true);
  const read = await readCapped(res, maxBytes, progress);
  if (!read.ok)
    return read.stalled ? failure('stalled', `${url}: ${read.reason}`, true) : unreadable(read.reason);
  let bytes = read.bytes;
  // the transport decodes `Content-Encoding: br` itself; a raw brotli body (no Content-Encoding) does not
  // start with the batch magic
  if (bytes.length > 0 && bytes[0] !== 0x44) {
    try {
      bytes = new Uint8Array(brotliDecompressSync(bytes, { maxOutputLength: maxBytes }));
    } catch (e) {
      // past maxOutputLength node refuses to make the buffer: the same refusal as a plain answer's
      const over = (e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      return unreadable(
        over ? `the response is over ${maxBytes} bytes once inflated; refused` : (e as Error).message,
      );
    }
  }
  const batch = decodeBatch(bytes);
  if (!batch.ok) return unreadable(`not a batch: ${batch.error.message}`);
  const cursor = res.headers.get(CURSOR_HEADER);
  if (!cursor) return unreadable(`no ${CURSOR_HEADER} header`);
  return { ok: true, value: { bundles: batch.value, cursor, bytes: read.bytes.length } };
}
