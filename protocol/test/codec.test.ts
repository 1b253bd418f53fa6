import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type BundleHeader,
  decodeBundle,
  encodeBundleBytes,
  encodeUnsigned,
  generateSigningKeyPair,
  type SigningKeyPair,
  signBytes,
  verifyBundle,
} from '../src/index.js';
import { headerArb } from './arbitraries.js';

let keys: SigningKeyPair;
let other: SigningKeyPair;
beforeAll(async () => {
  keys = await generateSigningKeyPair();
  other = await generateSigningKeyPair();
});

const header: BundleHeader = {
  id: '01JBX3M4Y5Z6A7B8C9D0E1F2G3' as BundleHeader['id'],
  kind: 'doc-delta',
  source: { site: 'ship-7', agent: 'a1' } as BundleHeader['source'],
  destination: 'hub',
  created: 1_700_000_000_000,
  lifetimeS: 86_400,
  priority: 'status',
};

function decodeOk(bytes: Uint8Array) {
  const r = decodeBundle(bytes);
  if (!r.ok) throw r.error;
  return r.value;
}

describe('bundle codec', () => {
  it('round-trips any header and payload, and the signature verifies', async () => {
    await fc.assert(
      fc.asyncProperty(headerArb, fc.uint8Array({ maxLength: 2048 }), async (h, payload) => {
        const bytes = await encodeBundleBytes(h, payload, keys.privateKey);
        const d = decodeOk(bytes);
        expect(d.header).toEqual(JSON.parse(JSON.stringify(h)));
        expect(Array.from(d.payload)).toEqual(Array.from(payload));
        expect(d.version).toBe(1);
        expect(await verifyBundle(d, keys.publicKey)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('fails verification when any single byte of header or payload changes', async () => {
    await fc.assert(
      fc.asyncProperty(
        headerArb,
        fc.uint8Array({ minLength: 1, maxLength: 256 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (h, payload, at, flip) => {
          const bytes = await encodeBundleBytes(h, payload, keys.privateKey);
          const signedLength = bytes.length - 64;
          const tampered = bytes.slice();
          const i = 8 + (at % (signedLength - 8)); // any header or payload byte (or their lengths)
          tampered[i] = (tampered[i] as number) ^ flip;
          const r = decodeBundle(tampered);
          // Either the framing no longer decodes, or it decodes and the signature fails.
          if (r.ok) expect(await verifyBundle(r.value, keys.publicKey)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fails verification against a key that did not sign it', async () => {
    const d = decodeOk(await encodeBundleBytes(header, Uint8Array.of(1, 2, 3), keys.privateKey));
    expect(await verifyBundle(d, other.publicKey)).toBe(false);
  });

  it('fails verification when the signature itself is altered', async () => {
    const bytes = await encodeBundleBytes(header, Uint8Array.of(1, 2, 3), keys.privateKey);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    expect(await verifyBundle(decodeOk(bytes), keys.publicKey)).toBe(false);
  });

  it('rejects an unknown format version with an error that names it', async () => {
    const bytes = await encodeBundleBytes(header, new Uint8Array(4), keys.privateKey);
    bytes[3] = 9;
    const r = decodeBundle(bytes);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('unsupported-version');
    expect(r.error.message).toContain('version 9');
  });

  it('rejects an unknown kind with an error that names it', async () => {
    // Build a validly framed bundle whose header carries a kind this version does not know.
    const unsigned = encodeUnsigned(header, new Uint8Array(0));
    const { cborEncode } = await import('../src/cbor.js');
    const h = cborEncode({ ...header, kind: 'telepathy' });
    const framed = new Uint8Array([...unsigned.subarray(0, 4), 0, 0, 0, h.length, ...h, 0, 0, 0, 0]);
    const bytes = new Uint8Array([...framed, ...(await signBytes(keys.privateKey, framed))]);
    const r = decodeBundle(bytes);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('unknown-kind');
    expect(r.error.message).toContain("'telepathy'");
  });

  it('rejects bytes that are not a bundle, truncated bundles and stray trailing bytes', async () => {
    const bytes = await encodeBundleBytes(header, new Uint8Array(10), keys.privateKey);
    for (const bad of [
      new Uint8Array(0),
      new TextEncoder().encode('{"kind":"doc-delta"}'.repeat(8)),
      bytes.subarray(0, bytes.length - 1),
      new Uint8Array([...bytes, 0]),
    ]) {
      const r = decodeBundle(bad);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe('bad-bundle');
    }
  });

  it('never throws on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (junk) => {
        const r = decodeBundle(junk);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });

  it('names the header field that is invalid', async () => {
    const { cborEncode } = await import('../src/cbor.js');
    const h = cborEncode({ ...header, lifetimeS: -5 });
    const framed = new Uint8Array([0x44, 0x4c, 0x42, 1, 0, 0, 0, h.length, ...h, 0, 0, 0, 0]);
    const r = decodeBundle(new Uint8Array([...framed, ...new Uint8Array(64)]));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("'lifetimeS'");
  });
});
