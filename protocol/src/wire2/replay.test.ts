import { describe, expect, it } from 'vitest';
import {
  aboveBitmap,
  acceptSeq,
  advanceReceipt,
  EMPTY_WINDOW,
  type ReceiptState,
  readAbove,
  receiptCovers,
  SEQ_WINDOW,
  type SeqWindow,
} from './replay.js';

const run = (seqs: number[]) => {
  let w: SeqWindow = EMPTY_WINDOW;
  return seqs.map((s) => {
    const v = acceptSeq(w, s);
    if (v.ok) w = v.window;
    return v.ok ? 'ok' : v.reason;
  });
};

describe('sequences of a stream', () => {
  it('accepts each sequence once, in any order within the window', () => {
    expect(run([1, 3, 2, 3, 5, 4, 1])).toEqual(['ok', 'ok', 'ok', 'replayed', 'ok', 'ok', 'replayed']);
  });

  it('refuses a sequence older than the window, even one never seen', () => {
    expect(run([1, 2 + SEQ_WINDOW, 2, 3 + 0])).toEqual(['ok', 'ok', 'too-old', 'ok']);
    expect(run([100, 100 - SEQ_WINDOW, 101 - SEQ_WINDOW])).toEqual(['ok', 'too-old', 'ok']);
  });

  it('refuses a sequence that is not a positive integer', () => {
    expect(run([0, 1.5])).toEqual(['too-old', 'too-old']);
  });
});

describe('cumulative receipts', () => {
  it('folds a contiguous run into upTo and keeps the rest as a bitmap', () => {
    let s: ReceiptState = { upTo: 0, above: [] };
    for (const q of [1, 2, 4, 7]) s = advanceReceipt(s, q);
    expect(s).toEqual({ upTo: 2, above: [4, 7] });
    const bm = aboveBitmap(s);
    expect(bm).toEqual(Uint8Array.of(0b1001));
    expect(readAbove(s.upTo, bm)).toEqual([4, 7]);
    expect([3, 4, 5, 7, 2].map((q) => receiptCovers(s.upTo, bm, q))).toEqual([
      false,
      true,
      false,
      true,
      true,
    ]);
    s = advanceReceipt(s, 3);
    expect(s).toEqual({ upTo: 4, above: [7] });
    expect(aboveBitmap({ upTo: 4, above: [] })).toBeUndefined();
  });
});
