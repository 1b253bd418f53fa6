import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cborEncode } from '../src/cbor.js';
import { decodeBatch, decodePayload, encodeBatch, MAX_INLINE_PUBLICATION_BYTES } from '../src/index.js';

describe('batch framing', () => {
  it('round-trips any list of bundles', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }), (items) => {
        const r = decodeBatch(encodeBatch(items));
        expect(r.ok).toBe(true);
        if (r.ok) expect(r.value.map((b) => Array.from(b))).toEqual(items.map((b) => Array.from(b)));
      }),
    );
  });

  it('rejects truncation, trailing bytes, a wrong magic and an unknown version, and never throws', () => {
    const good = encodeBatch([Uint8Array.of(1, 2, 3), Uint8Array.of(4)]);
    const cases: Array<[Uint8Array, string]> = [
      [good.subarray(0, good.length - 1), 'bad-bundle'],
      [new Uint8Array([...good, 7]), 'bad-bundle'],
      [new Uint8Array([0x50, ...good.subarray(1)]), 'bad-bundle'],
      [new Uint8Array([...good.subarray(0, 3), 2, ...good.subarray(4)]), 'unsupported-version'],
    ];
    for (const [bytes, code] of cases) {
      const r = decodeBatch(bytes);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe(code);
    }
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (junk) => void decodeBatch(junk)));
  });

  it('refuses a batch that claims more bundles than the limit before reading them', () => {
    const bytes = new Uint8Array([0x44, 0x4c, 0x54, 1, 0xff, 0xff, 0xff, 0xff]);
    const r = decodeBatch(bytes);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain('over the limit');
  });
});

describe('payloads', () => {
  it('decodes a doc-delta payload with its bytes intact', () => {
    const changes = Uint8Array.of(0x85, 0x6f, 0x4a, 0x83);
    const r = decodePayload('doc-delta', cborEncode({ epoch: 1, changes, blobs: [] }));
    expect(r.ok).toBe(true);
    if (r.ok) expect(Array.from(r.value.changes)).toEqual(Array.from(changes));
  });

  it('names the payload field that is wrong', () => {
    const r = decodePayload(
      'control',
      cborEncode({ type: 'plan-request', requestId: 'x', site: 'BAD SITE' }),
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/control payload field '(site|environment)'/);
  });

  it('carries a small publication inline in its manifest, bytes intact, and refuses one over the cap', () => {
    const manifest = (inline: Uint8Array) => ({
      sha256: 'a'.repeat(64),
      size: inline.length,
      contentType: 'application/octet-stream',
      name: 'infra',
      fileKind: 'git',
      bundleId: 'p1',
      inline,
    });
    const small = Uint8Array.from({ length: 600 }, (_, i) => i % 251);
    const r = decodePayload('blob', cborEncode(manifest(small)));
    expect(r.ok).toBe(true);
    if (r.ok) expect(Array.from(r.value.inline ?? [])).toEqual(Array.from(small));
    const over = decodePayload(
      'blob',
      cborEncode(manifest(new Uint8Array(MAX_INLINE_PUBLICATION_BYTES + 1))),
    );
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.error.message).toMatch(/inline/);
  });
});
