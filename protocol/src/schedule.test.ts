import { describe, expect, it } from 'vitest';
import { checkScheduleCases, SCHEDULE_CASES } from '../test/scheduleCases.js';
import { cadenceSeconds, parseSchedule } from './schedule.js';

describe('parseSchedule', () => {
  it('agrees with standard cron on every awkward expression of the table', () => {
    expect(SCHEDULE_CASES.length).toBeGreaterThan(15);
    expect(checkScheduleCases(parseSchedule)).toEqual([]);
  });

  it('finds a disagreement when the semantics differ (the table can fail)', () => {
    // A parser that requires both day fields (the relay's old one) misses 2026-12-07.
    const both: typeof parseSchedule = (e, o) => parseSchedule(e === '0 6 1 * 1' ? '0 6 1 * *' : e, o);
    expect(checkScheduleCases(both).join('\n')).toContain('both day fields restricted');
  });

  it('declares the longest gap between runs as the cadence', () => {
    const from = Date.parse('2026-12-02T00:00:00Z');
    const cadence = (e: string, seconds = false) => {
      const r = parseSchedule(e, { seconds });
      if (!r.ok) throw new Error(r.error);
      return cadenceSeconds(r.value, from);
    };
    expect(cadence('*/15 * * * *')).toBe(900);
    expect(cadence('0 */6 * * *')).toBe(21_600);
    expect(cadence('*/10 * * * * *', true)).toBe(10);
    expect(cadence('0 9,17 * * *')).toBe(16 * 3600);
  });
});
