import { describe, expect, it } from 'vitest';
import { encodeUlid, monotonicUlid, RunIdSchema, ulidTime } from '../src/index.js';

describe('ULIDs', () => {
  it('encodes time so that ids sort by creation time', () => {
    const r = new Uint8Array(10);
    const ids = [0, 1, 1_700_000_000_000, 2 ** 48 - 1].map((t) => encodeUlid(t, r));
    expect([...ids].sort()).toEqual(ids);
    expect(ulidTime(ids[2] as string)).toBe(1_700_000_000_000);
    for (const id of ids) expect(RunIdSchema.safeParse(id).success).toBe(true);
  });

  it('stays strictly increasing when the clock stands still or steps back', () => {
    let t = 5000;
    const next = monotonicUlid(
      () => t,
      () => new Uint8Array(10).fill(7),
    );
    const a = next();
    const b = next();
    t = 4000;
    const c = next();
    t = 6000;
    const d = next();
    expect(a < b && b < c && c < d).toBe(true);
  });
});
