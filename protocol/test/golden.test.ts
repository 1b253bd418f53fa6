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
import { goldenSets } from './fixtures/golden-sets.js';

const keyPem = readFileSync(new URL('./fixtures/golden-test-key.pem', import.meta.url), 'utf8');

// Committed once each (see fixtures/make-golden.ts). These must keep decoding in every later version.
for (const set of goldenSets) {
  const golden = JSON.parse(readFileSync(new URL(`./fixtures/${set.file}`, import.meta.url), 'utf8')) as {
    publicKey: string;
    vectors: Array<{ name: string; hex: string }>;
    batchHex: string;
  };

  describe(`golden vectors (${set.format})`, () => {
    it('holds one vector per case, in order', () => {
      expect(golden.vectors.map((v) => v.name)).toEqual(set.cases.map((c) => c.name));
    });

    for (const [i, c] of set.cases.entries()) {
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
}
