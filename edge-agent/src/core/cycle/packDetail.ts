import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { PLAN_DETAIL_CONTENT_TYPE } from '@driftline/protocol';

/** Packs a redacted detail as a content-addressed blob: brotli, sha256 of the compressed bytes. */
export function packDetail(canonical: string) {
  const bytes = brotliCompressSync(Buffer.from(canonical), { params: { [zlib.BROTLI_PARAM_QUALITY]: 9 } });
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    contentType: PLAN_DETAIL_CONTENT_TYPE,
  };
}
