import { describe, expect, it } from 'vitest';
import { WindowAim } from './windowAim.js';

const FROM = Date.parse('2026-11-27T00:00:00Z');
const MIN = 60_000;
// One minute every five, as the operator declared it.
const aim = new WindowAim([`every 5m for 1m from 2026-11-27T00:00:00Z`], 900_000);

describe('WindowAim', () => {
  it('brings a backoff wait forward to the next window opening', () => {
    // 2 min after the first window opened: the next opens at 5 min.
    expect(aim.wait(900_000, FROM + 2 * MIN)).toBe(3 * MIN);
    expect(aim.wait(10_000, FROM + 2 * MIN)).toBe(10_000);
  });

  it('tries at least every min(backoffCap, window / 4) inside a window', () => {
    expect(aim.wait(900_000, FROM + 5 * MIN + 1000)).toBe(15_000);
    const tight = new WindowAim(['every 5m for 1m from 2026-11-27T00:00:00Z'], 5000);
    expect(tight.wait(5000, FROM + 5 * MIN + 1000)).toBe(5000);
    // A few-second window is not a busy loop: a second at least.
    const short = new WindowAim(['every 50s for 2s from 2026-11-27T00:00:00Z'], 900_000);
    expect(short.wait(900_000, FROM + 50_000)).toBe(1000);
  });

  it('knows the window open now and the next', () => {
    expect(aim.openAt(FROM + 30_000)).toEqual({ start: FROM, end: FROM + MIN });
    expect(aim.openAt(FROM + MIN)).toBeNull();
    expect(aim.nextAfter(FROM + 30_000)).toEqual({ start: FROM + 5 * MIN, end: FROM + 6 * MIN });
  });

  it('owes a presence in a window nothing went up in, once', () => {
    const now = FROM + 10 * MIN + 5000;
    expect(aim.presenceDue(null, now)).toBe(true);
    expect(aim.presenceDue(FROM + 6 * MIN, now)).toBe(true);
    expect(aim.presenceDue(FROM + 10 * MIN + 1000, now)).toBe(false);
    // Between windows nothing is owed.
    expect(aim.presenceDue(null, FROM + 12 * MIN)).toBe(false);
  });

  it('leaves everything alone without a plan it can read (free text)', () => {
    const free = new WindowAim(['when the satellite is up'], 900_000);
    expect(free.planned).toBe(false);
    expect(free.wait(900_000, FROM)).toBe(900_000);
    expect(free.presenceDue(null, FROM)).toBe(false);
  });
});
