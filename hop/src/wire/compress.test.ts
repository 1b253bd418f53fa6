import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BEST_QUALITY_BELOW, compressBatch } from './compress.js';

describe('compressBatch', () => {
  it('round-trips small and large batches (quality 11 below the threshold, 5 above)', () => {
    const text = (n: number) => new TextEncoder().encode('driftline '.repeat(Math.ceil(n / 10)).slice(0, n));
    for (const n of [0, 100, BEST_QUALITY_BELOW, BEST_QUALITY_BELOW + 1, 3 * 1024 * 1024]) {
      const src = text(n);
      const out = compressBatch(src);
      expect(Buffer.compare(brotliDecompressSync(out), src)).toBe(0);
      if (n > 1000) expect(out.length).toBeLessThan(n / 10);
    }
  });
});
