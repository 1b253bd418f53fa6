import { describe, expect, it } from 'vitest';
import { cadenceSeconds, planSchedule, runSchedule, type Timers } from './cronCells.js';

describe('cadenceSeconds', () => {
  it('reads the interval a cron expression declares', () => {
    expect(cadenceSeconds('*/15 * * * *')).toBe(900);
    expect(cadenceSeconds('0 */6 * * *')).toBe(21_600);
    expect(cadenceSeconds('*/10 * * * * *')).toBe(10);
  });

  it('takes the longest gap of an uneven schedule', () => {
    expect(cadenceSeconds('0 9,17 * * *')).toBe(16 * 3600);
  });
});

/** Timers a test moves by hand: one pending timeout at a time, as runSchedule keeps. */
function manualTimers(start: number) {
  let now = start;
  let pending: { at: number; fn: () => void } | null = null;
  const timers: Timers = {
    now: () => now,
    setTimeout: (fn, ms) => {
      pending = { at: now + ms, fn };
      return pending;
    },
    clearTimeout: (h) => {
      if (h === pending) pending = null;
    },
  };
  /** Moves the clock to `t`, running every timeout due by then (bounded by count). */
  const advanceTo = (t: number) => {
    for (let i = 0; i < 1_000_000 && pending && pending.at <= t; i++) {
      const p = pending;
      pending = null;
      now = Math.max(now, p.at);
      p.fn();
    }
    now = t;
  };
  const jumpTo = (t: number) => {
    now = t;
  };
  return { timers, advanceTo, jumpTo, pending: () => pending };
}

describe('runSchedule', () => {
  const T0 = Date.parse('2026-12-02T00:00:00Z'); // a Wednesday

  it('fires at each occurrence of the schedule it shows: the 1st of the month or a Monday', () => {
    const m = manualTimers(T0);
    const fired: string[] = [];
    const stop = runSchedule(
      planSchedule('0 6 1 * 1', 'UTC'),
      () => fired.push(new Date(m.timers.now()).toISOString()),
      m.timers,
      6 * 3_600_000, // looks at the clock every 6 h instead of every minute: fewer timer turns to drive
    );
    m.advanceTo(Date.parse('2027-01-05T00:00:00Z'));
    expect(fired).toEqual([
      '2026-12-07T06:00:00.000Z',
      '2026-12-14T06:00:00.000Z',
      '2026-12-21T06:00:00.000Z',
      '2026-12-28T06:00:00.000Z',
      '2027-01-01T06:00:00.000Z',
      '2027-01-04T06:00:00.000Z',
    ]);
    stop();
    expect(m.pending()).toBeNull();
  });

  it('fires once after a sleep that missed several occurrences, then keeps the schedule', () => {
    const m = manualTimers(T0);
    let fired = 0;
    runSchedule(planSchedule('*/10 * * * * *', 'UTC'), () => fired++, m.timers);
    m.jumpTo(T0 + 3_600_000); // the process slept an hour: 360 occurrences passed
    m.advanceTo(T0 + 3_600_000 + 60_000);
    expect(fired).toBe(1 + 6);
  });
});
