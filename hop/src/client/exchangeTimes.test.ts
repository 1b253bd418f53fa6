import { exchangeTerm } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { ExchangeTimes } from './exchangeTimes.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const T = 1_767_225_600_000;
const KEY = `ed25519:${'A'.repeat(43)}`;
const SIG = 'B'.repeat(86);

/**
 * A caller whose wall clock reads `wall(t)` at true time t and whose monotonic clock reads t − T; the
 * upstream's clock is true and it stamps every exchange (decision 290).
 */
function caller(wall: (t: number) => number) {
  const times = new ExchangeTimes();
  return {
    times,
    /** One stamped exchange begun at true time t, `up` and `down` ms each way. */
    exchange(t: number, up: number, down: number) {
      const t1 = t + up;
      const t2 = t1 + 5;
      const end = t2 + down;
      const headers = new Headers({
        'driftline-received': String(t1),
        'driftline-replied': String(t2),
        'driftline-stamp': `${KEY} ${SIG}`,
      });
      times.record(wall(t), headers, wall(end), end - t, end - T);
    },
    /** The term the hub reads from the exchange the caller would sign at true time t, and the truth. */
    signed(t: number) {
      const x = times.stampedExchange(wall(t), t - T);
      return { term: x && exchangeTerm(x, wall(t)), truth: wall(t) - t };
    },
  };
}

describe('the stamped exchange a caller signs when its wall clock is stepped or skewed', () => {
  it('signs no exchange from before its wall clock was set back 5 h 34 min, however quick', () => {
    const STEP = -(5 * HOUR + 34 * MIN);
    const c = caller((t) => (t >= T + HOUR ? t + STEP : t));
    for (let i = 0; i < 4; i++) c.exchange(T + i * 10 * MIN, 40, 40);
    // just after the step, before any new exchange: nothing to sign, though the upstream stamps
    expect(c.signed(T + HOUR + MIN).term).toBeNull();
    expect(c.times.stamps()).toBe(true);
    // a slower exchange after the step is the one signed, and its term contains the truth
    c.exchange(T + HOUR + 5 * MIN, 4000, 4000);
    const { term, truth } = c.signed(T + HOUR + 10 * MIN);
    expect(term).not.toBeNull();
    expect(Math.abs((term?.offsetMs ?? 0) - truth)).toBeLessThanOrEqual(term?.uncertaintyMs ?? -1);
  });

  it('signs no exchange through a skew of 10 ms a second that moved the clock past its 15 ppm', () => {
    const c = caller((t) => (t >= T + MIN ? t + Math.round(0.01 * (t - T - MIN)) : t));
    c.exchange(T, 100, 100);
    expect(c.signed(T + 30 * MIN).term).toBeNull();
  });

  it('signs the least-round-trip exchange of an honest clock, as before', () => {
    const c = caller((t) => t + 7 * MIN);
    c.exchange(T, 900, 100);
    c.exchange(T + MIN, 50, 60);
    c.exchange(T + 2 * MIN, 500, 500);
    const { term, truth } = c.signed(T + HOUR);
    expect(term).toEqual({ offsetMs: 7 * MIN + 5, uncertaintyMs: 109 });
    expect(truth).toBe(7 * MIN);
    expect(c.times.stampedExchange()?.t[1]).toBe(T + MIN + 50);
  });

  it('states the clock where it is after a step, from samples taken before it', () => {
    const c = caller((t) => (t >= T + HOUR ? t - 3 * HOUR : t));
    c.exchange(T, 40, 40);
    const at = T + HOUR + MIN;
    const e = c.times.best(at - 3 * HOUR, at - T);
    expect(e).toMatchObject({ offsetMs: -3 * HOUR });
  });
});
