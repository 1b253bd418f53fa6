/**
 * The forms a known value can take in text besides itself: lower/upper case, hex, base64 and
 * base64url (at any alignment inside a longer encoded string), `+` for spaces as in query strings.
 * URL percent-encoding and JSON/HCL escapes are undone on the text side instead (`decodeText`).
 */

/** Values shorter than this many bytes are not searched for in encoded form: too many chance matches. */
export const MIN_ENCODED_BYTES = 6;

export interface Needles {
  /** Compared case-insensitively: pass them lower-cased against lower-cased text. */
  caseless: string[];
  /** Compared exactly (base64 is case-sensitive). */
  exact: string[];
}

const utf8 = new TextEncoder();

function hexOf(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * The part of base64(`value`) that does not depend on what precedes or follows it, for each of the
 * three alignments it can have inside a longer base64 string: with `shift` bytes before it, the first
 * characters mix in those bytes and the last one mixes in what follows, so both are left out.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = new Uint8Array(shift + bytes.length);
    padded.set(bytes, shift);
    const start = Math.ceil((8 * shift) / 6);
    const end = Math.floor((8 * (shift + bytes.length)) / 6);
    const core = base64(padded).slice(start, end);
    if (core.length >= 8) out.push(core);
  }
  return out;
}

/** Every form of `value` the scan looks for. */
export function needlesOf(value: string): Needles {
  const lower = value.toLowerCase();
  const caseless = [lower];
  if (lower.includes(' ')) caseless.push(lower.replaceAll(' ', '+'));
  const exact: string[] = [];
  const bytes = utf8.encode(value);
  if (bytes.length >= MIN_ENCODED_BYTES) {
    caseless.push(hexOf(bytes));
    for (const core of base64Cores(bytes)) {
      exact.push(core);
      const url = core.replaceAll('+', '-').replaceAll('/', '_');
      if (url !== core) exact.push(url);
    }
  }
  return { caseless, exact };
}
