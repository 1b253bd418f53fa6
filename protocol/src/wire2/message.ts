import { concatBytes } from '../bytes.js';
import { SIGNATURE_BYTES } from '../codec.js';
import { type Decoded, fail } from '../codecError.js';
import { signBytes, verifyBytes } from '../keys.js';
import {
  type CborLimits,
  CborSubsetError,
  cborDecodeItem,
  cborEncodeValue,
  cborHead,
  DEFAULT_CBOR_LIMITS,
  type Value,
} from './cbor.js';
import {
  type Bodies,
  bodyFromValue,
  bodyToValue,
  KIND_NAMES,
  KINDS,
  type KindName,
  kindName,
} from './kinds.js';

/**
 * A hop v2 message (docs/decisions/490-hop-v2-wire-format.md): one CBOR array of seven items,
 *
 *   [ version (2), kind, from, to, seq, body, signature ]
 *
 * `from` and `to` are the short ids both ends learned at enrolment (0 is the hub); `seq` numbers the
 * messages of the stream from `from` to `to`, from 1. The signature is Ed25519 by `from`'s enrolled key over
 *
 *   "driftline/wire2" 0x00 || the CBOR array of the first six items
 *
 * which is the received bytes with the first byte 0x87 read as 0x86 and the signature item cut off: the
 * signature covers the exact bytes received and verifying re-encodes nothing. The domain prefix keeps a
 * v2 signature from ever being valid as anything else the same key signs (v1 bundles begin "DLB", custody
 * records are JSON, stamps begin "driftline-stamp/1").
 */
export const WIRE2_VERSION = 2;
export const WIRE2_DOMAIN = new TextEncoder().encode('driftline/wire2\0');
/** Largest message a receiver reads by default (a push of `MAX_CHANGES_BYTES` and its framing fits). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024 + 64 * 1024;
/** The smallest message: 7 one-byte items, an empty body and a 64-byte signature with its 2-byte head. */
const MIN_MESSAGE_BYTES = 1 + 5 + 1 + 2 + SIGNATURE_BYTES;

export interface MessageHeader<K extends KindName = KindName> {
  kind: K;
  from: number;
  to: number;
  seq: number;
}

export type Message<K extends KindName = KindName> = K extends KindName
  ? MessageHeader<K> & { body: Bodies[K] }
  : never;

export type DecodedMessage<K extends KindName = KindName> = Message<K> & {
  version: number;
  signature: Uint8Array;
  /** The bytes the signature covers (domain prefix included). */
  signed: Uint8Array;
  /** The whole message as received. */
  bytes: Uint8Array;
};

export interface DecodeOptions {
  maxBytes?: number;
  limits?: CborLimits;
}

/** The bytes `from` signs for a message: the domain, then the array of its first six items. */
export function messageSignedBytes(m: Message): Uint8Array {
  const body = bodyToValue(m.kind, m.body as never);
  const checked = bodyFromValue(m.kind, body);
  if (!checked.ok) throw new RangeError(`not a valid ${m.kind} message: ${checked.reason}`);
  for (const [name, v] of [
    ['from', m.from],
    ['to', m.to],
    ['seq', m.seq],
  ] as const)
    if (!Number.isSafeInteger(v) || v < (name === 'seq' ? 1 : 0))
      throw new RangeError(
        `message ${name} ${v} is not a ${name === 'seq' ? 'positive' : 'non-negative'} integer`,
      );
  const unsigned = cborEncodeValue([WIRE2_VERSION, KINDS[m.kind], m.from, m.to, m.seq, body] as Value);
  return concatBytes(WIRE2_DOMAIN, unsigned);
}

/** Encodes and signs a message with the sender's private key. */
export function encodeMessage(m: Message, privateKey: CryptoKey): Promise<Uint8Array> {
  return encodeMessageWith(m, (data) => signBytes(privateKey, data));
}

/** As {@link encodeMessage}, with a signer that holds the key itself (a node's key file). */
export async function encodeMessageWith(
  m: Message,
  sign: (data: Uint8Array) => Uint8Array | Promise<Uint8Array>,
): Promise<Uint8Array> {
  const signed = messageSignedBytes(m);
  const signature = await sign(signed);
  const unsigned = signed.subarray(WIRE2_DOMAIN.length);
  const out = concatBytes(unsigned, cborHead(2, SIGNATURE_BYTES), signature);
  out[0] = 0x87; // the array of seven: the six signed items and the signature
  return out;
}

const bad = (m: string) => fail('bad-bundle', `hop v2 message: ${m}`);

/**
 * Decodes a message: framing, header and body checked, nothing trusted yet. Call {@link verifyMessage}
 * with the key enrolled for `from`, then the sequence check (`acceptSeq`) for the stream.
 */
export function decodeMessage(bytes: Uint8Array, opts: DecodeOptions = {}): Decoded<DecodedMessage> {
  const maxBytes = opts.maxBytes ?? MAX_MESSAGE_BYTES;
  if (bytes.length > maxBytes)
    // a server caps the body before the codec and answers `payload-too-large`; this is the second line
    return bad(`${bytes.length} bytes, over the limit of ${maxBytes}`);
  if (bytes.length < MIN_MESSAGE_BYTES) return bad(`${bytes.length} bytes is too short to be one`);
  const first = bytes[0] as number;
  if (first >> 5 !== 4 || (first & 0x1f) >= 24)
    return bad(`it begins with 0x${first.toString(16)}, not a short CBOR array`);
  const limits = opts.limits ?? DEFAULT_CBOR_LIMITS;
  try {
    const items: Value[] = [];
    let at = 1;
    const version = cborDecodeItem(bytes, at, limits, 2);
    if (version.value !== WIRE2_VERSION)
      return fail(
        'unsupported-version',
        `hop message version ${String(version.value)} is not supported (this node reads ${WIRE2_VERSION})`,
      );
    if (first !== 0x87) return bad(`an array of ${first & 0x1f} items, not 7`);
    at = version.end;
    let sigStart = 0;
    for (let i = 1; i < 7; i++) {
      if (i === 6) sigStart = at;
      const item = cborDecodeItem(bytes, at, limits, 2);
      items.push(item.value);
      at = item.end;
    }
    if (at !== bytes.length) return bad(`${bytes.length - at} stray bytes after the signature`);
    const [kindNo, from, to, seq, bodyValue, signature] = items;
    const kind = typeof kindNo === 'number' ? kindName(kindNo) : undefined;
    if (!kind)
      return fail(
        'unknown-kind',
        `hop message kind ${String(kindNo)} is not known (known: ${KIND_NAMES.map((k) => `${KINDS[k]} ${k}`).join(', ')})`,
      );
    if (typeof from !== 'number' || typeof to !== 'number') return bad('from and to must be uint short ids');
    if (typeof seq !== 'number' || seq < 1) return bad('seq must be a uint from 1');
    if (!(signature instanceof Uint8Array) || signature.length !== SIGNATURE_BYTES)
      return bad(`the signature must be a ${SIGNATURE_BYTES}-byte string`);
    const body = bodyFromValue(kind, bodyValue as Value);
    if (!body.ok) return bad(body.reason);
    const signed = concatBytes(WIRE2_DOMAIN, bytes.subarray(0, sigStart));
    signed[WIRE2_DOMAIN.length] = 0x86;
    const value = { version: WIRE2_VERSION, kind, from, to, seq, body: body.body, signature, signed, bytes };
    return { ok: true, value: value as DecodedMessage };
  } catch (e) {
    if (e instanceof CborSubsetError) return bad(e.message);
    throw e;
  }
}

/** true when `from`'s enrolled key signed the message and not a byte of it changed. */
export function verifyMessage(m: DecodedMessage, publicKey: CryptoKey): Promise<boolean> {
  return verifyBytes(publicKey, m.signature, m.signed).catch(() => false);
}

/** An ack's `tip`: the first 8 bytes of sha256 over the signature of the push it names. */
export async function messageTip(signature: Uint8Array): Promise<Uint8Array> {
  const d = await globalThis.crypto.subtle.digest('SHA-256', signature as Uint8Array<ArrayBuffer>);
  return new Uint8Array(d).slice(0, 8);
}
