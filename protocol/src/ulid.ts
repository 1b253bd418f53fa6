/**
 * ULIDs (https://github.com/ulid/spec): 48-bit millisecond time + 80 random bits, Crockford base32.
 * Pure: time and randomness come in as arguments so callers (and tests) control them through their
 * `Clock` and `IdGen` ports. `monotonicUlid` keeps ids strictly increasing within one millisecond.
 */

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const MAX_TIME = 2 ** 48 - 1;

export function encodeUlid(timeMs: number, random: Uint8Array): string {
  if (!Number.isInteger(timeMs) || timeMs < 0 || timeMs > MAX_TIME) {
    throw new RangeError(`ulid time must be an integer millisecond between 0 and 2^48-1, got ${timeMs}`);
  }
  if (random.length < 10) throw new RangeError('ulid needs 10 random bytes');
  let time = '';
  let t = timeMs;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  // 80 bits -> 16 base32 characters, 5 bits at a time from the most significant end.
  let rand = '';
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < 10; i++) {
    acc = (acc << 8) | (random[i] as number);
    bits += 8;
    while (bits >= 5) {
      rand += ALPHABET[(acc >> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= (1 << bits) - 1;
  }
  return time + rand;
}

export function ulidTime(id: string): number {
  let t = 0;
  for (const ch of id.slice(0, 10)) t = t * 32 + ALPHABET.indexOf(ch);
  return t;
}

/** Returns a generator of strictly increasing ULIDs; `now` and `randomBytes` are its ports. */
export function monotonicUlid(now: () => number, randomBytes: (n: number) => Uint8Array): () => string {
  let lastTime = -1;
  let last: Uint8Array = new Uint8Array(10);
  return () => {
    const t = now();
    if (t <= lastTime) {
      last = increment(last);
      return encodeUlid(lastTime, last);
    }
    lastTime = t;
    last = randomBytes(10);
    return encodeUlid(t, last);
  };
}

function increment(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] === 255) {
      out[i] = 0;
      continue;
    }
    out[i] = (out[i] as number) + 1;
    return out;
  }
  throw new RangeError('ulid random part overflowed within one millisecond');
}

/** Random bytes from WebCrypto (Node 20 and browsers). */
export function cryptoRandomBytes(n: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

const CANONICAL = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/**
 * A canonical ULID (upper case, 26 characters) as its 16 bytes (the 128-bit value, big-endian), or null
 * for any other text: what a compact message carries where the text would cost 26 (decision 505).
 */
export function ulidToBytes(id: string): Uint8Array | null {
  if (!CANONICAL.test(id)) return null;
  let v = 0n;
  for (const ch of id) v = (v << 5n) | BigInt(ALPHABET.indexOf(ch));
  const out = new Uint8Array(16);
  for (let i = 15; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** The canonical ULID text of 16 bytes ({@link ulidToBytes}' inverse). */
export function ulidFromBytes(b: Uint8Array): string {
  if (b.length !== 16) throw new RangeError(`a ULID is 16 bytes, not ${b.length}`);
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = ALPHABET[Number(v & 31n)] + out;
    v >>= 5n;
  }
  return out;
}
