import { describe, expect, it } from 'vitest';
import { CONFIRM_WINDOWS, confirmBy, isUnconfirmed } from './confirmBy.js';

const T0 = Date.parse('2026-11-27T00:00:00Z');
const agent = (o: { contactIntervalS?: number | null; contactWindows?: string[] } = {}) => ({
  confirmsRequests: true,
  contactIntervalS: o.contactIntervalS ?? null,
  contactWindows: o.contactWindows ?? [],
});

describe('confirmBy: when the agent’s word on something sent is due', () => {
  it('is none for an agent that does not confirm (an older agent)', () => {
    expect(confirmBy({ ...agent(), confirmsRequests: undefined }, T0)).toEqual({});
    expect(confirmBy(undefined, T0)).toEqual({});
  });

  it('is N contact intervals: the agent’s, else the hub’s default, else an hour', () => {
    expect(confirmBy(agent({ contactIntervalS: 600 }), T0)).toEqual({
      confirmBy: T0 + CONFIRM_WINDOWS * 600_000,
    });
    expect(confirmBy(agent(), T0, 120)).toEqual({ confirmBy: T0 + CONFIRM_WINDOWS * 120_000 });
    expect(confirmBy(agent(), T0)).toEqual({ confirmBy: T0 + CONFIRM_WINDOWS * 3_600_000 });
  });

  it('is the end of the Nth contact window from now, plus a minute, for an agent that declares windows', () => {
    // A 40 s pass every 4 min from T0; sent 10 s into the first pass: the next three start at 4, 8, 12 min.
    const a = agent({ contactIntervalS: 5, contactWindows: ['every 4m for 40s from 2026-11-27T00:00:00Z'] });
    expect(confirmBy(a, T0 + 10_000)).toEqual({ confirmBy: T0 + 12 * 60_000 + 40_000 + 60_000 });
    // A daily window: three days, not three 5 s intervals.
    const daily = agent({ contactIntervalS: 5, contactWindows: ['0 2 * * * for 30m'] });
    expect(confirmBy(daily, T0)).toEqual({
      confirmBy: T0 + 2 * 86_400_000 + 2 * 3_600_000 + 30 * 60_000 + 60_000,
    });
    // Free text judges nothing: the interval rule.
    expect(
      confirmBy(agent({ contactIntervalS: 5, contactWindows: ['when the satellite is up'] }), T0),
    ).toEqual({
      confirmBy: T0 + CONFIRM_WINDOWS * 5_000,
    });
  });

  it('is unconfirmed from confirmBy on, until confirmed', () => {
    expect(isUnconfirmed(T0, false, T0 - 1)).toBe(false);
    expect(isUnconfirmed(T0, false, T0)).toBe(true);
    expect(isUnconfirmed(T0, true, T0 + 1)).toBe(false);
    expect(isUnconfirmed(undefined, false, T0)).toBe(false);
  });
});
