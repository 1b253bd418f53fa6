import { describe, expect, it } from 'vitest';
import { formatClockOffset } from './clockText.js';

describe('clock offset with its uncertainty', () => {
  it('prints both in one unit, with the precision the uncertainty allows, rounding the bound up', () => {
    expect(formatClockOffset(90_012, 300)).toBe('+90.0 s ± 0.3 s');
    expect(formatClockOffset(-60_040, 311)).toBe('−60.0 s ± 0.4 s');
    expect(formatClockOffset(-310, 40)).toBe('−310 ms ± 40 ms');
    expect(formatClockOffset(420_000, 2_010)).toBe('+420 s ± 3 s');
    expect(formatClockOffset(1_234, 25)).toBe('+1.23 s ± 0.03 s');
    expect(formatClockOffset(-12_000, 720_000)).toBe('−12 s ± 720 s');
    expect(formatClockOffset(7_200_000, 4_000_000)).toBe('+120 min ± 67 min');
    expect(formatClockOffset(0, 0)).toBe('+0 ms ± 0 ms');
  });

  it('says when only a one-way bound is known, and shows an older hub’s offset as before', () => {
    expect(formatClockOffset(-12_000, null)).toBe('12 s behind ± ? (no round trip yet)');
    expect(formatClockOffset(1200, undefined)).toBe('1 s ahead');
    expect(formatClockOffset(null, 40)).toBe('unknown');
  });
});
