import { describe, expect, it } from 'vitest';
import { ClockFilter, type ClockSample, exchangeSample, wallMovedSince } from '../src/index.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const T = 1_767_225_600_000;

/**
 * A client whose wall clock reads `wall(t)` at true time t (the server's clock is true), and whose monotonic
 * clock reads t − T (a machine's monotonic clock is not stepped when its wall clock is set).
 */
function client(wall: (t: number) => number) {
  return {
    /** One exchange begun at true time t, `up` and `down` ms each way, the server working 5 ms. */
    sample(t: number, up: number, down: number): ClockSample {
      const t1 = t + up;
      const t2 = t1 + 5;
      const end = t2 + down;
      const s = exchangeSample(wall(t), t1, t2, wall(end)) as ClockSample;
      return { ...s, mono: end - T };
    },
    /** The filter's estimate at true time t, and the truth it must contain. */
    best(f: ClockFilter, t: number) {
      const e = f.best(wall(t), t - T);
      return { e, truth: wall(t) - t };
    },
  };
}

const within = (e: { offsetMs: number; uncertaintyMs: number } | null, truth: number) =>
  e !== null && Math.abs(e.offsetMs - truth) <= e.uncertaintyMs;

describe('the clock filter when the client’s wall clock is stepped or skewed', () => {
  it('states an offset that contains the truth after the wall clock is set back 5 h 34 min', () => {
    const STEP = -(5 * HOUR + 34 * MIN);
    const c = client((t) => (t >= T + HOUR ? t + STEP : t));
    const f = new ClockFilter();
    // four quick exchanges before the step, three slow ones after it: the quick ones have the least round trip
    for (let i = 0; i < 4; i++) f.add(c.sample(T + i * 10 * MIN, 40, 40));
    for (let i = 0; i < 3; i++) f.add(c.sample(T + HOUR + (i + 1) * 5 * MIN, 4000, 4000));
    const { e, truth } = c.best(f, T + HOUR + 20 * MIN);
    expect(truth).toBe(STEP);
    expect(within(e, truth)).toBe(true);
  });

  it('states an offset that contains the truth after the wall clock is stepped forward 3 h, before any new sample', () => {
    const c = client((t) => (t >= T + HOUR ? t + 3 * HOUR : t));
    const f = new ClockFilter();
    f.add(c.sample(T, 200, 300));
    const { e, truth } = c.best(f, T + HOUR + MIN);
    expect(within(e, truth)).toBe(true);
  });

  it('follows a wall clock that gains 20 ms a second (72 s an hour), far past the 15 ppm it allows for', () => {
    const c = client((t) => t + Math.round(0.02 * (t - T)));
    const f = new ClockFilter();
    f.add(c.sample(T, 100, 100));
    const { e, truth } = c.best(f, T + 2 * HOUR);
    expect(truth).toBe(144_000);
    expect(within(e, truth)).toBe(true);
  });

  it('states exactly what it did for an honest clock, with or without the monotonic clock', () => {
    const c = client((t) => t + 7 * MIN);
    const withMono = new ClockFilter();
    const without = new ClockFilter();
    for (const s of [c.sample(T, 900, 100), c.sample(T + MIN, 50, 60), c.sample(T + 2 * MIN, 500, 500)]) {
      withMono.add(s);
      const { mono: _, ...plain } = s;
      without.add(plain);
    }
    const at = T + HOUR;
    expect(withMono.best(at + 7 * MIN, at - T)).toEqual(without.best(at + 7 * MIN));
    expect(without.best(at + 7 * MIN)).toEqual({ offsetMs: 7 * MIN + 5, uncertaintyMs: 109 });
  });

  it('says how far the wall clock moved against the monotonic clock since a sample', () => {
    const s = { offsetMs: 0, uncertaintyMs: 10, rttMs: 20, at: T, mono: 1000 };
    expect(wallMovedSince(s, T + 60_000, 61_000)).toBe(0);
    expect(wallMovedSince(s, T - HOUR + 60_000, 61_000)).toBe(-HOUR);
    expect(wallMovedSince({ ...s, mono: undefined }, T + 60_000, 61_000)).toBeNull();
  });
});
