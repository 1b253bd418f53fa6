import {
  BUNDLE_KINDS,
  type BundleHeader,
  BundleHeaderSchema,
  type BundleKind,
  PAYLOAD_SCHEMAS,
  type PayloadOf,
} from './bundle.js';
import { concatBytes } from './bytes.js';
import { cborDecode, cborEncode } from './cbor.js';
import { type Decoded, fail } from './codecError.js';
import { signBytes, verifyBytes } from './keys.js';

/**
 * A signed bundle on the wire (format version 1), all integers big-endian:
 *
 *   0   3 bytes  magic "DLB"
 *   3   1 byte   format version (1)
 *   4   4 bytes  header length H
 *   8   H bytes  header, CBOR map (see BundleHeaderSchema)
 *   .   4 bytes  payload length P
 *   .   P bytes  payload, CBOR map of the kind's payload schema
 *   .  64 bytes  Ed25519 signature over every byte before it
 *
 * The signature covers the exact bytes received, so verifying never re-encodes anything.
 * Decoders of later versions keep decoding version 1 (golden vectors in protocol/test/fixtures).
 */
export const BUNDLE_MAGIC = new Uint8Array([0x44, 0x4c, 0x42]);
export const BUNDLE_VERSION = 1;
export const SUPPORTED_BUNDLE_VERSIONS: readonly number[] = [1];
export const SIGNATURE_BYTES = 64;
export const MAX_HEADER_BYTES = 64 * 1024;

export interface DecodedBundle {
  version: number;
  header: BundleHeader;
  /** The payload bytes as signed; decode them with `decodePayload(header.kind, payload)`. */
  payload: Uint8Array;
  signature: Uint8Array;
  /** The bytes the signature covers. */
  signed: Uint8Array;
  /** The whole bundle as received. */
  bytes: Uint8Array;
}

function u32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}

/** The bytes a signature covers. Exposed for tests and for signers that hold keys elsewhere. */
export function encodeUnsigned(header: BundleHeader, payload: Uint8Array): Uint8Array {
  const h = cborEncode(BundleHeaderSchema.parse(header));
  if (h.length > MAX_HEADER_BYTES)
    throw new RangeError(`bundle header is ${h.length} bytes, over ${MAX_HEADER_BYTES}`);
  return concatBytes(
    BUNDLE_MAGIC,
    Uint8Array.of(BUNDLE_VERSION),
    u32(h.length),
    h,
    u32(payload.length),
    payload,
  );
}

/** Encodes and signs a bundle whose payload is already bytes. */
export async function encodeBundleBytes(
  header: BundleHeader,
  payload: Uint8Array,
  privateKey: CryptoKey,
): Promise<Uint8Array> {
  const signed = encodeUnsigned(header, payload);
  return concatBytes(signed, await signBytes(privateKey, signed));
}

/** Validates the payload against its kind's schema, encodes it and signs the bundle. */
export async function encodeBundle<K extends BundleKind>(
  header: BundleHeader & { kind: K },
  payload: PayloadOf<K>,
  privateKey: CryptoKey,
): Promise<Uint8Array> {
  const checked = PAYLOAD_SCHEMAS[header.kind].parse(payload);
  return encodeBundleBytes(header, cborEncode(checked), privateKey);
}

/** Decodes the framing and header. Checks no signature: call `verifyBundle` with the signer's key. */
export function decodeBundle(bytes: Uint8Array): Decoded<DecodedBundle> {
  if (bytes.length < 8 + 4 + SIGNATURE_BYTES)
    return fail('bad-bundle', `bundle is ${bytes.length} bytes, too short`);
  if (bytes[0] !== 0x44 || bytes[1] !== 0x4c || bytes[2] !== 0x42) {
    return fail('bad-bundle', 'not a Driftline bundle (magic bytes "DLB" missing)');
  }
  const version = bytes[3] as number;
  if (!SUPPORTED_BUNDLE_VERSIONS.includes(version)) {
    return fail(
      'unsupported-version',
      `bundle format version ${version} is not supported (this node reads ${SUPPORTED_BUNDLE_VERSIONS.join(', ')})`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const hLen = view.getUint32(4);
  if (hLen > MAX_HEADER_BYTES || 8 + hLen + 4 + SIGNATURE_BYTES > bytes.length) {
    return fail('bad-bundle', `bundle header length ${hLen} does not fit in ${bytes.length} bytes`);
  }
  const pLen = view.getUint32(8 + hLen);
  const end = 8 + hLen + 4 + pLen;
  if (end + SIGNATURE_BYTES !== bytes.length) {
    return fail(
      'bad-bundle',
      `bundle lengths say ${end + SIGNATURE_BYTES} bytes but ${bytes.length} arrived`,
    );
  }
  let raw: unknown;
  try {
    raw = cborDecode(bytes.subarray(8, 8 + hLen));
  } catch (e) {
    return fail('bad-bundle', `bundle header is not valid CBOR: ${(e as Error).message}`);
  }
  const kind = (raw as { kind?: unknown } | null)?.kind;
  if (typeof kind === 'string' && !(BUNDLE_KINDS as readonly string[]).includes(kind)) {
    return fail('unknown-kind', `bundle kind '${kind}' is not known (known: ${BUNDLE_KINDS.join(', ')})`);
  }
  const parsed = BundleHeaderSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return fail(
      'bad-bundle',
      `bundle header field '${first?.path.join('.') || '?'}': ${first?.message ?? 'invalid'}`,
    );
  }
  return {
    ok: true,
    value: {
      version,
      header: parsed.data,
      payload: bytes.subarray(8 + hLen + 4, end),
      signature: bytes.subarray(end),
      signed: bytes.subarray(0, end),
      bytes,
    },
  };
}

/** true when the bundle was signed by `publicKey` and not a byte of it has changed. */
export function verifyBundle(bundle: DecodedBundle, publicKey: CryptoKey): Promise<boolean> {
  return verifyBytes(publicKey, bundle.signature, bundle.signed);
}

/** Decodes and validates a payload for its kind. */
export function decodePayload<K extends BundleKind>(kind: K, payload: Uint8Array): Decoded<PayloadOf<K>> {
  let raw: unknown;
  try {
    raw = cborDecode(payload);
  } catch (e) {
    return fail('bad-bundle', `${kind} payload is not valid CBOR: ${(e as Error).message}`);
  }
  const parsed = PAYLOAD_SCHEMAS[kind].safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return fail(
      'bad-bundle',
      `${kind} payload field '${first?.path.join('.') || '?'}': ${first?.message ?? 'invalid'}`,
    );
  }
  return { ok: true, value: parsed.data as PayloadOf<K> };
}
