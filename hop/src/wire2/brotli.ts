import {
  brotliCompressSync,
  brotliDecompressSync,
  constants,
  deflateRawSync,
  inflateRawSync,
} from 'node:zlib';
import { wire2 } from '@driftline/protocol';

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

/** Brotli's inflate, capped: {@link inflateWithin}'s default. */
const unbrotli = (bytes: Uint8Array, max: number) => brotliDecompressSync(bytes, { maxOutputLength: max });
/** Raw inflate against the `dz1` dictionary, capped. */
const undz1 = (bytes: Uint8Array, max: number) =>
  inflateRawSync(bytes, { dictionary: wire2.CHANGES_DICTIONARY_DZ1, maxOutputLength: max });

/** A compressed field inflated within `max` bytes (S8), or why not, naming `what`; brotli unless told. */
export function inflateWithin(
  bytes: Uint8Array,
  max: number,
  what: string,
  inflate: { name?: string; run: (bytes: Uint8Array, max: number) => Buffer } = { run: unbrotli },
): { ok: true; bytes: Uint8Array } | { ok: false; reason: string } {
  try {
    return { ok: true, bytes: new Uint8Array(inflate.run(bytes, max)) };
  } catch (e) {
    const how = inflate.name ? ` (${inflate.name})` : '';
    return { ok: false, reason: `${what} do not inflate${how} within ${max} bytes: ${(e as Error).message}` };
  }
}

/**
 * A push's changes as they travel: the smaller of brotli and, where every node carries it (`dz1`), raw deflate
 * against the shared dictionary (docs/decisions/510-compact-blob-announcements.md); as they are when neither
 * is smaller. A few changed plans go ~20 % smaller by the dictionary; a whole round's, by brotli.
 */
export function compressChanges(
  bytes: Uint8Array,
  dz1: boolean,
): { bytes: Uint8Array; encoding?: 'br' | 'dz1' } {
  const br = brotliIfSmaller(bytes);
  const best: { bytes: Uint8Array; encoding?: 'br' | 'dz1' } = br.br
    ? { bytes: br.bytes, encoding: 'br' }
    : { bytes };
  if (!dz1 || bytes.length === 0) return best;
  const dz = deflateRawSync(bytes, { level: 9, dictionary: wire2.CHANGES_DICTIONARY_DZ1 });
  return dz.length < best.bytes.length ? { bytes: new Uint8Array(dz), encoding: 'dz1' } : best;
}

/** A push's changes inflated by their encoding within `max` bytes (S8), or why not. */
export function inflateChanges(
  bytes: Uint8Array,
  encoding: 'br' | 'dz1',
  max: number,
): { ok: true; bytes: Uint8Array } | { ok: false; reason: string } {
  return encoding === 'br'
    ? inflateWithin(bytes, max, 'its changes')
    : inflateWithin(bytes, max, 'its changes', { name: 'dz1', run: undz1 });
}
