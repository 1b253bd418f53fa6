import { describe, expect, it } from 'vitest';
import { describeSchedule, msUntilChange, scheduledUp } from './schedule.js';

const leo = { upMs: 10, periodMs: 95, offsetMs: 0 };

describe('schedule', () => {
  it('is up for upMs at the start of every period, down for the rest', () => {
    expect([0, 9, 10, 94, 95, 104, 105].map((t) => scheduledUp(leo, t))).toEqual([
      true,
      true,
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it('opens the first window at the offset', () => {
    const s = { upMs: 10, periodMs: 100, offsetMs: 30 };
    expect(scheduledUp(s, 0)).toBe(false);
    expect(scheduledUp(s, 30)).toBe(true);
    expect(scheduledUp(s, 40)).toBe(false);
    expect(msUntilChange(s, 0)).toBe(30);
    expect(msUntilChange(s, 35)).toBe(5);
  });

  it('counts the time to the next change from inside and outside a window', () => {
    expect(msUntilChange(leo, 4)).toBe(6);
    expect(msUntilChange(leo, 10)).toBe(85);
    expect(msUntilChange(null, 10)).toBe(Number.POSITIVE_INFINITY);
    expect(msUntilChange({ upMs: 5, periodMs: 5, offsetMs: 0 }, 3)).toBe(Number.POSITIVE_INFINITY);
  });

  it('treats no schedule as always up and a zero window as always down', () => {
    expect(scheduledUp(null, 123)).toBe(true);
    expect(scheduledUp({ upMs: 0, periodMs: 10, offsetMs: 0 }, 0)).toBe(false);
  });

  it('describes itself for people', () => {
    expect(describeSchedule({ upMs: 600_000, periodMs: 5_700_000, offsetMs: 0 })).toBe(
      'up 10m every 1h35m (offset 0s)',
    );
    expect(describeSchedule(null)).toBe('always up');
  });
});
