import { Decoder, Encoder } from 'cbor-x';

/**
 * CBOR (RFC 8949) with plain maps, untagged byte strings and no cbor-x record extension, so any
 * CBOR decoder can read what Driftline writes. Object keys are sorted before encoding so that the
 * same value always gives the same bytes.
 */
const encoder = new Encoder({
  useRecords: false,
  mapsAsObjects: true,
  tagUint8Array: false,
  variableMapSize: true,
});
const decoder = new Decoder({ useRecords: false, mapsAsObjects: true });

/** The value with object keys sorted and undefined fields left out: the same value, the same encoding. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Uint8Array || value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = canonical(v);
  }
  return out;
}

export function cborEncode(value: unknown): Uint8Array {
  const bytes = encoder.encode(canonical(value));
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes CBOR; byte strings come back as plain `Uint8Array` (not Node's Buffer). */
export function cborDecode(bytes: Uint8Array): unknown {
  return normalise(decoder.decode(bytes));
}

/** Replaces Buffers by plain Uint8Arrays, in place: the decoded value is fresh, and most hold none. */
function normalise(value: unknown): unknown {
  if (value instanceof Uint8Array) {
    return value.constructor === Uint8Array ? value : new Uint8Array(value);
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (v !== null && typeof v === 'object') value[i] = normalise(v);
    }
    return value;
  }
  const obj = value as Record<string, unknown>;
  for (const k in obj) {
    const v = obj[k];
    if (v !== null && typeof v === 'object') obj[k] = normalise(v);
  }
  return obj;
}
