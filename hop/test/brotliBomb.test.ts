import { createBrotliDecompress } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BROTLI_BOMB_INFLATED_BYTES, brotliBomb } from '../src/testing.js';

describe('the brotli bomb the inflate-cap tests share', () => {
  // inflating 300 MiB in 4 MiB chunks takes about a second here (16 KiB chunks: five); a hang guard beside a whole run
  it('is under 1 KiB and inflates to 300 MiB of zeros', { timeout: 60_000 }, async () => {
    const bomb = brotliBomb();
    expect(bomb.length).toBeLessThan(1024);
    let total = 0;
    let nonZero = 0;
    let zeros = Buffer.alloc(0);
    const inflate = createBrotliDecompress({ chunkSize: 4 * 1024 * 1024 });
    inflate.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (zeros.length !== chunk.length) zeros = Buffer.alloc(chunk.length);
      if (!chunk.equals(zeros)) nonZero++;
    });
    const done = new Promise<void>((resolve, reject) => {
      inflate.on('end', resolve);
      inflate.on('error', reject);
    });
    inflate.end(bomb);
    await done;
    expect(total).toBe(BROTLI_BOMB_INFLATED_BYTES);
    expect(nonZero, 'chunks holding a byte other than zero').toBe(0);
  });
});
