import { PLAN_DETAIL_CONTENT_TYPE } from '../agentDoc.js';
import { MAX_BLOB_ANNOUNCEMENTS, MAX_CONTENT_TYPE } from '../bundle.js';
import { fromHex, toHex } from '../bytes.js';
import { Sha256Schema } from '../ids.js';
import { ulidFromBytes, ulidToBytes } from '../ulid.js';
import { CborSubsetError, cborDecodeItem, cborEncodeValue, type Value } from './cbor.js';

/**
 * A push's detail-blob announcements in binary (docs/decisions/510-compact-blob-announcements.md): push
 * field 9, `blobList`, where field 7 carries them as JSON. One CBOR array of entries, each
 * `[sha256 (32 bytes), size, type, runId (16 bytes)?]`, `type` 0 for the plan detail's content type
 * (nearly every announcement) or the content type as text. ~56 B an entry where the JSON is ~197 B.
 */

/** An announcement as both forms carry it (protocol's `BlobAnnouncement`, unbranded). */
export interface BlobListEntry {
  sha256: string;
  size: number;
  contentType: string;
  runId?: string | undefined;
}

/**
 * The list in binary, or null when an entry has no binary form (a digest that is not lowercase hex, a run
 * id that is not a canonical ULID): the caller sends field 7 then, as before.
 */
export function encodeBlobList(entries: readonly BlobListEntry[]): Uint8Array | null {
  const out: Value[] = [];
  for (const e of entries) {
    if (!Sha256Schema.safeParse(e.sha256).success || !Number.isSafeInteger(e.size) || e.size < 0) return null;
    // what the decoder refuses has no binary form: an empty or overlong type goes as JSON (field 7)
    if (e.contentType.length === 0 || e.contentType.length > MAX_CONTENT_TYPE) return null;
    const runId = e.runId === undefined ? null : ulidToBytes(e.runId);
    if (runId === null && e.runId !== undefined) return null;
    const type = e.contentType === PLAN_DETAIL_CONTENT_TYPE ? 0 : e.contentType;
    out.push(runId ? [fromHex(e.sha256), e.size, type, runId] : [fromHex(e.sha256), e.size, type]);
  }
  return out.length > MAX_BLOB_ANNOUNCEMENTS ? null : cborEncodeValue(out);
}

/** The entries of field 9, or a reason naming what is wrong (S4: the caller refuses the push). */
export function decodeBlobList(
  bytes: Uint8Array,
): { ok: true; value: BlobListEntry[] } | { ok: false; reason: string } {
  const bad = (why: string) => ({ ok: false as const, reason: `its blob list ${why}` });
  let value: Value;
  try {
    const item = cborDecodeItem(bytes, 0, { maxDepth: 2, maxEntries: MAX_BLOB_ANNOUNCEMENTS });
    if (item.end !== bytes.length) return bad(`has ${bytes.length - item.end} bytes after it`);
    value = item.value;
  } catch (e) {
    if (e instanceof CborSubsetError) return bad(`is not CBOR of hop v2's subset: ${e.message}`);
    throw e;
  }
  if (!Array.isArray(value)) return bad('is not an array');
  const out: BlobListEntry[] = [];
  for (const [i, e] of (value as Value[]).entries()) {
    if (!Array.isArray(e) || (e.length !== 3 && e.length !== 4))
      return bad(`entry ${i} is not [sha256, size, type, runId?]`);
    const [sha, size, type, runId] = e as Value[];
    if (!(sha instanceof Uint8Array) || sha.length !== 32) return bad(`entry ${i} has no 32-byte sha256`);
    if (typeof size !== 'number') return bad(`entry ${i} has no size`);
    if (!(type === 0 || (typeof type === 'string' && type.length > 0 && type.length <= MAX_CONTENT_TYPE)))
      return bad(`entry ${i} names no content type (0, or text of at most ${MAX_CONTENT_TYPE})`);
    if (runId !== undefined && !(runId instanceof Uint8Array && runId.length === 16))
      return bad(`entry ${i} has a run id that is not 16 bytes`);
    out.push({
      sha256: toHex(sha),
      size,
      contentType: type === 0 ? PLAN_DETAIL_CONTENT_TYPE : type,
      ...(runId ? { runId: ulidFromBytes(runId) } : {}),
    });
  }
  return { ok: true, value: out };
}
