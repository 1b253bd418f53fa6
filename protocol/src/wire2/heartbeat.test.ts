import { describe, expect, it } from 'vitest';
import { cellListDigest, decodeHeartbeat, encodeHeartbeat, readVarints, writeVarints } from './heartbeat.js';

describe('a quiet round heartbeat', () => {
  it('names a whole quiet round of 200 cells in one run and a byte a cell', async () => {
    const keys = Array.from({ length: 200 }, (_, i) => `prod/component-${String(i).padStart(3, '0')}`);
    const list = await cellListDigest(keys);
    const cells = keys.map((_, index) => ({ index, at: 1_700_000_000_000 + 50 * index }));
    const hb = encodeHeartbeat(list, cells);
    expect(hb.runs).toEqual(Uint8Array.of(200, 1));
    expect(hb.gaps.length).toBe(199);
    const back = decodeHeartbeat(hb, list, 200);
    expect(back).toEqual({ ok: true, cells });
  });

  it('round-trips a sparse set with times in any order', async () => {
    const list = await cellListDigest(['a', 'b', 'c', 'd', 'e', 'f']);
    const cells = [
      { index: 5, at: 10 },
      { index: 1, at: 5_000_000 },
      { index: 2, at: 20 },
    ];
    const hb = encodeHeartbeat(list, cells);
    expect(readVarints(hb.runs, 10)).toEqual([0, 1, 2, 2, 1]);
    expect(decodeHeartbeat(hb, list, 6)).toEqual({
      ok: true,
      cells: [...cells].sort((a, b) => a.index - b.index),
    });
  });

  it('refuses a heartbeat for another list, or one past the list', async () => {
    const list = await cellListDigest(['a', 'b']);
    const hb = encodeHeartbeat(list, [
      { index: 0, at: 1 },
      { index: 1, at: 2 },
    ]);
    const other = await cellListDigest(['a', 'c']);
    expect(decodeHeartbeat(hb, other, 2)).toMatchObject({ ok: false, reason: /another cell list/ });
    expect(decodeHeartbeat(hb, list, 1)).toMatchObject({ ok: false, reason: /pass the list's 1 cells/ });
    expect(decodeHeartbeat({ ...hb, gaps: new Uint8Array() }, list, 2)).toMatchObject({
      ok: false,
      reason: /0 gaps for 2 cells/,
    });
  });

  it('reads only minimal, terminated varints', () => {
    expect(readVarints(writeVarints([0, 127, 128, 300, 2 ** 40]), 10)).toEqual([0, 127, 128, 300, 2 ** 40]);
    expect(readVarints(Uint8Array.of(0x80), 10)).toBeNull();
    expect(readVarints(Uint8Array.of(0x80, 0x00), 10)).toBeNull();
    expect(readVarints(Uint8Array.of(1, 2, 3), 2)).toBeNull();
  });
});
