import { brotliCompressSync, constants } from 'node:zlib';

/** Batches up to this size are compressed at brotli's best quality: they are cheap, and links are slow. */
export const BEST_QUALITY_BELOW = 64 * 1024;

/**
 * Brotli for a batch on the wire (both directions). Quality 11 costs about 0.4 ms per KiB, so a 1 MiB
 * batch took ~430 ms of CPU and ~30 MB of memory on every (re)send; above `BEST_QUALITY_BELOW` quality
 * 5 (~5 ms per MiB) keeps a relay draining custody from being CPU-bound, for a few per cent more bytes
 * on data that is mostly Automerge's already-compressed columns.
 */
export function compressBatch(bytes: Uint8Array) {
  const quality = bytes.length <= BEST_QUALITY_BELOW ? constants.BROTLI_MAX_QUALITY : 5;
  return brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
}
