import { describe, expect, it } from 'vitest';
import { formatClockOffset } from './clockText.js';

describe('clock offset with its uncertainty', () => {
  it('says how far off the clock is and within how much, rounding the bound up', () => {
    expect(formatClockOffset(-310, 40)).toBe('−310 ms ± 40 ms');
    expect(formatClockOffset(420_000, 2_010)).toBe('7 min ahead ± 2.1 s');
    expect(formatClockOffset(-12_000, 720_000)).toBe('12 s behind ± 12 min');
    expect(formatClockOffset(0, 0)).toBe('+0 ms ± 0 ms');
  });

  it('says when only a one-way bound is known, and shows an older hub’s offset as before', () => {
    expect(formatClockOffset(-12_000, null)).toBe('12 s behind ± ? (no round trip yet)');
    expect(formatClockOffset(1200, undefined)).toBe('1 s ahead');
    expect(formatClockOffset(null, 40)).toBe('unknown');
  });
});
