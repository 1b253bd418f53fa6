import { concatBytes } from './bytes.js';
import { type Decoded, fail } from './codecError.js';

/**
 * A batch of bundles, the body of `POST /v1/bundles` and of a downlink answer (version 1):
 *
 *   0  3 bytes  magic "DLT"
 *   3  1 byte   batch version (1)
 *   4  4 bytes  count N
 *   then N times: 4 bytes length L, L bytes of one encoded bundle
 *
 * Compression is the transport's job (`Content-Encoding: br`), not the codec's.
 */
export const BATCH_MAGIC = new Uint8Array([0x44, 0x4c, 0x54]);
export const BATCH_VERSION = 1;
export const BATCH_CONTENT_TYPE = 'application/vnd.driftline.batch';

export function encodeBatch(bundles: readonly Uint8Array[]): Uint8Array {
  const parts: Uint8Array[] = [BATCH_MAGIC, Uint8Array.of(BATCH_VERSION), u32(bundles.length)];
  for (const b of bundles) parts.push(u32(b.length), b);
  return concatBytes(...parts);
}

export function decodeBatch(bytes: Uint8Array, maxBundles = 100_000): Decoded<Uint8Array[]> {
  if (bytes.length < 8) return fail('bad-bundle', `batch is ${bytes.length} bytes, too short`);
  if (bytes[0] !== 0x44 || bytes[1] !== 0x4c || bytes[2] !== 0x54) {
    return fail('bad-bundle', 'not a Driftline batch (magic bytes "DLT" missing)');
  }
  if (bytes[3] !== BATCH_VERSION) {
    return fail(
      'unsupported-version',
      `batch version ${bytes[3]} is not supported (this node reads ${BATCH_VERSION})`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(4);
  if (count > maxBundles)
    return fail('bad-bundle', `batch holds ${count} bundles, over the limit of ${maxBundles}`);
  const out: Uint8Array[] = [];
  let at = 8;
  for (let i = 0; i < count; i++) {
    if (at + 4 > bytes.length)
      return fail('bad-bundle', `batch ends inside the length of bundle ${i + 1} of ${count}`);
    const len = view.getUint32(at);
    at += 4;
    if (at + len > bytes.length) return fail('bad-bundle', `batch ends inside bundle ${i + 1} of ${count}`);
    out.push(bytes.subarray(at, at + len));
    at += len;
  }
  if (at !== bytes.length)
    return fail('bad-bundle', `batch has ${bytes.length - at} stray bytes after its last bundle`);
  return { ok: true, value: out };
}

function u32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}
