/**
 * The CBOR subset hop v2 messages are written in (docs/decisions/490-hop-v2-wire-format.md): RFC 8949's
 * core deterministic encoding (§4.2.1) of unsigned integers, byte and text strings, arrays, maps keyed by
 * unsigned integers in ascending order, `true` and `false`. Nothing else: no negative integers, floats,
 * tags, null or indefinite lengths. The decoder refuses anything outside the subset, any integer or length
 * not in its shortest form, and map keys out of order, so one value has exactly one encoding; it bounds
 * nesting and container sizes before allocating anything (S8).
 *
 * Why not cbor-x (which `cbor.ts` uses for v1): it cannot bound nesting, and it decodes many encodings of
 * one value. A signed message must have one.
 */

import { concatBytes } from '../bytes.js';

/** A value of the subset. Maps are keyed by small unsigned integers (field numbers). */
export type Value = number | boolean | string | Uint8Array | readonly Value[] | ReadonlyMap<number, Value>;

export interface CborLimits {
  /** Deepest nesting of arrays and maps (the top-level item is depth 1). */
  maxDepth: number;
  /** Most entries one array or map may declare. */
  maxEntries: number;
}

export const DEFAULT_CBOR_LIMITS: CborLimits = { maxDepth: 6, maxEntries: 4096 };

/** Why bytes are not a value of the subset; the message names the offset and what was found. */
export class CborSubsetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CborSubsetError';
  }
}

const text = new TextEncoder();
const untext = new TextDecoder('utf-8', { fatal: true });

/** The head of an item: major type and argument, in the shortest form. */
export function cborHead(major: number, n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`CBOR argument ${n} is not a safe uint`);
  const m = major << 5;
  if (n < 24) return Uint8Array.of(m | n);
  if (n < 0x100) return Uint8Array.of(m | 24, n);
  if (n < 0x10000) return Uint8Array.of(m | 25, n >> 8, n & 0xff);
  if (n < 0x100000000) {
    const out = Uint8Array.of(m | 26, 0, 0, 0, 0);
    new DataView(out.buffer).setUint32(1, n);
    return out;
  }
  const out = Uint8Array.of(m | 27, 0, 0, 0, 0, 0, 0, 0, 0);
  new DataView(out.buffer).setBigUint64(1, BigInt(n));
  return out;
}

/** Encodes a value of the subset, deterministically (map keys sorted ascending). */
export function cborEncodeValue(value: Value): Uint8Array {
  const parts: Uint8Array[] = [];
  const walk = (v: Value): void => {
    if (typeof v === 'number') parts.push(cborHead(0, v));
    else if (typeof v === 'boolean') parts.push(Uint8Array.of(v ? 0xf5 : 0xf4));
    else if (typeof v === 'string') {
      const b = text.encode(v);
      parts.push(cborHead(3, b.length), b);
    } else if (v instanceof Uint8Array) parts.push(cborHead(2, v.length), v);
    else if (Array.isArray(v)) {
      parts.push(cborHead(4, v.length));
      for (const x of v as readonly Value[]) walk(x);
    } else {
      const m = v as ReadonlyMap<number, Value>;
      const keys = [...m.keys()].sort((a, b) => a - b);
      parts.push(cborHead(5, keys.length));
      for (const k of keys) {
        parts.push(cborHead(0, k));
        walk(m.get(k) as Value);
      }
    }
  };
  walk(value);
  return concatBytes(...parts);
}

const MAJOR_NAMES = ['uint', 'negative int', 'bytes', 'text', 'array', 'map', 'tag', 'simple/float'];

/** Reads one item's head at `at`: major type, argument, and where its content starts. */
function readHead(bytes: Uint8Array, at: number): { major: number; n: number; next: number } {
  if (at >= bytes.length) throw new CborSubsetError(`ends at byte ${at} where an item was expected`);
  const first = bytes[at] as number;
  const major = first >> 5;
  const info = first & 0x1f;
  if (major === 7) {
    if (info === 20 || info === 21) return { major, n: info, next: at + 1 };
    throw new CborSubsetError(`byte ${at}: simple value or float 0x${first.toString(16)} is not allowed`);
  }
  if (major === 1 || major === 6)
    throw new CborSubsetError(`byte ${at}: a ${MAJOR_NAMES[major]} is not allowed (subset: uints only)`);
  if (info < 24) return { major, n: info, next: at + 1 };
  const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0;
  if (size === 0)
    throw new CborSubsetError(`byte ${at}: indefinite or reserved length ${info} is not allowed`);
  if (at + 1 + size > bytes.length) throw new CborSubsetError(`ends inside the head at byte ${at}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset + at + 1, size);
  let n: number;
  if (size === 1) n = view.getUint8(0);
  else if (size === 2) n = view.getUint16(0);
  else if (size === 4) n = view.getUint32(0);
  else {
    const big = view.getBigUint64(0);
    if (big > BigInt(Number.MAX_SAFE_INTEGER))
      throw new CborSubsetError(`byte ${at}: integer ${big} is over 2^53 - 1`);
    n = Number(big);
  }
  const least = size === 1 ? 24 : size === 2 ? 0x100 : size === 4 ? 0x10000 : 0x100000000;
  if (n < least) throw new CborSubsetError(`byte ${at}: ${n} is not in its shortest form`);
  return { major, n, next: at + 1 + size };
}

/**
 * Decodes the one item that starts at `at`; returns it and the offset after it. Throws
 * {@link CborSubsetError} for anything outside the subset or the limits.
 */
export function cborDecodeItem(
  bytes: Uint8Array,
  at: number,
  limits: CborLimits = DEFAULT_CBOR_LIMITS,
  depth = 1,
): { value: Value; end: number } {
  const { major, n, next } = readHead(bytes, at);
  if (major === 0) return { value: n, end: next };
  if (major === 7) return { value: n === 21, end: next };
  if (major === 2 || major === 3) {
    if (next + n > bytes.length)
      throw new CborSubsetError(`byte ${at}: ${MAJOR_NAMES[major]} of ${n} runs past the end`);
    const raw = bytes.subarray(next, next + n);
    if (major === 2) return { value: raw.slice(), end: next + n };
    try {
      return { value: untext.decode(raw), end: next + n };
    } catch {
      throw new CborSubsetError(`byte ${at}: text is not valid UTF-8`);
    }
  }
  if (depth > limits.maxDepth)
    throw new CborSubsetError(`byte ${at}: nested deeper than ${limits.maxDepth} levels`);
  if (n > limits.maxEntries)
    throw new CborSubsetError(`byte ${at}: ${n} entries, over the limit of ${limits.maxEntries}`);
  // every entry takes at least one byte: a length the rest cannot hold is refused before the loop
  if (next + n > bytes.length)
    throw new CborSubsetError(`byte ${at}: ${n} entries cannot fit in what is left`);
  let end = next;
  if (major === 4) {
    const out: Value[] = [];
    for (let i = 0; i < n; i++) {
      const item = cborDecodeItem(bytes, end, limits, depth + 1);
      out.push(item.value);
      end = item.end;
    }
    return { value: out, end };
  }
  const map = new Map<number, Value>();
  let last = -1;
  for (let i = 0; i < n; i++) {
    const key = readHead(bytes, end);
    if (key.major !== 0) throw new CborSubsetError(`byte ${end}: a map key must be a uint`);
    if (key.n <= last) throw new CborSubsetError(`byte ${end}: map key ${key.n} is out of order or repeated`);
    last = key.n;
    const item = cborDecodeItem(bytes, key.next, limits, depth + 1);
    map.set(key.n, item.value);
    end = item.end;
  }
  return { value: map, end };
}
