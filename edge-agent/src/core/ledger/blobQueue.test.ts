import { describe, expect, it } from 'vitest';
import { reuploadDue } from './blobQueue.js';

describe('reuploadDue (docs/decisions/412-every-held-blob-receipted.md)', () => {
  it('waits resendAfter, then twice, four, eight and at most sixteen times that between uploads', () => {
    const waits = [0, 1, 2, 3, 4, 5, 9].map((again) => {
      let t = 0;
      while (!reuploadDue(0, again, t, 1000)) t += 1000;
      return t;
    });
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 16_000, 16_000]);
  });
});
