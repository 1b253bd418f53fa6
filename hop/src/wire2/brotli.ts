import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

/** `bytes` brotli'd at the highest quality when that is smaller (a v2 field and its `br` encoding), else as they are. */
export function brotliIfSmaller(bytes: Uint8Array): { bytes: Uint8Array; br: boolean } {
  if (bytes.length === 0) return { bytes, br: false };
  const br = brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
  return br.length < bytes.length ? { bytes: new Uint8Array(br), br: true } : { bytes, br: false };
}

/** A `br` field inflated within `max` bytes (S8), or why not, naming `what`. */
export function inflateWithin(
  bytes: Uint8Array,
  max: number,
  what: string,
): { ok: true; bytes: Uint8Array } | { ok: false; reason: string } {
  try {
    return { ok: true, bytes: new Uint8Array(brotliDecompressSync(bytes, { maxOutputLength: max })) };
  } catch (e) {
    return { ok: false, reason: `${what} do not inflate within ${max} bytes: ${(e as Error).message}` };
  }
}
