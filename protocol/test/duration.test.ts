import { describe, expect, it } from 'vitest';
import { parseCliDuration, parseDuration, parseExpiry } from '../src/index.js';

/** One grammar for every duration Driftline reads (src/duration.ts). */
describe('durations', () => {
  it('reads units, sums of them and decimals; a bare number only on the command line', () => {
    expect([parseDuration('500ms'), parseDuration('1h30m'), parseDuration('1.5h')]).toEqual([
      500, 5_400_000, 5_400_000,
    ]);
    expect(parseDuration('600')).toBeNull();
    expect([parseCliDuration(' 600 '), parseCliDuration('2d'), parseCliDuration('0')]).toEqual([
      600_000,
      172_800_000,
      null,
    ]);
    for (const bad of ['', '1w', '-5', 'h', '5 m', '1h 30m', '9'.repeat(20)])
      expect(parseCliDuration(bad), bad).toBeNull();
  });

  it('reads an expiry as a duration from now or an ISO time, after now and within a year', () => {
    const now = Date.parse('2026-11-29T12:00:00Z');
    expect(parseExpiry('7d', now)).toBe(now + 7 * 86_400_000);
    expect(parseExpiry('1h30m', now)).toBe(now + 5_400_000);
    expect(parseExpiry('2026-12-01T00:00:00Z', now)).toBe(Date.parse('2026-12-01T00:00:00Z'));
    for (const bad of ['2026-11-01T00:00:00Z', '400d', 'soon', ''])
      expect(parseExpiry(bad, now), bad).toBeNull();
  });
});
