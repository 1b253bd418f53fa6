import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type BundleHeader,
  decodeBatch,
  decodeBundle,
  decodePayload,
  encodeBundle,
  fromHex,
  importPrivateKeyPem,
  publicKeyFromText,
  toHex,
  verifyBundle,
} from '../src/index.js';
import { goldenCases } from './fixtures/golden-cases.js';

// Committed once (see fixtures/make-golden.ts). These must keep decoding in every later version.
const golden = JSON.parse(
  readFileSync(new URL('./fixtures/bundle-v1.golden.json', import.meta.url), 'utf8'),
) as {
  publicKey: string;
  vectors: Array<{ name: string; hex: string }>;
  batchHex: string;
};
const keyPem = readFileSync(new URL('./fixtures/golden-test-key.pem', import.meta.url), 'utf8');

describe('golden vectors (format v1)', () => {
  for (const [i, c] of goldenCases.entries()) {
    it(`decodes and verifies: ${c.name}`, async () => {
      const vector = golden.vectors[i];
      expect(vector?.name).toBe(c.name);
      const r = decodeBundle(fromHex(vector!.hex));
      if (!r.ok) throw r.error;
      expect(r.value.version).toBe(1);
      expect(r.value.header).toEqual(c.header);
      const p = decodePayload(r.value.header.kind, r.value.payload);
      if (!p.ok) throw p.error;
      expect(p.value).toEqual(c.payload);
      expect(await verifyBundle(r.value, await publicKeyFromText(golden.publicKey))).toBe(true);
    });

    it(`encodes byte-identically: ${c.name}`, async () => {
      const key = await importPrivateKeyPem(keyPem);
      const bytes = await encodeBundle(c.header as BundleHeader, c.payload as never, key);
      expect(toHex(bytes)).toBe(golden.vectors[i]!.hex);
    });
  }

  it('decodes the golden batch into the same bundles', () => {
    const r = decodeBatch(fromHex(golden.batchHex));
    if (!r.ok) throw r.error;
    expect(r.value.map(toHex)).toEqual(golden.vectors.map((v) => v.hex));
  });
});
