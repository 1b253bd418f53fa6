import { describe, expect, it } from 'vitest';
import { expectedContactText } from './expectedContact.js';

const plan = {
  source: 'declared' as const,
  windows: ['every 4m for 40s from 2026-11-27T00:00:00Z'],
  confidence: null,
  judged: true,
  state: 'waiting' as const,
  nextWindowAt: null,
  nextWindowEndsAt: null,
  lastWindowAt: null,
  lastWindowEndsAt: null,
  missedWindows: 0,
  graceS: 60,
  unreachableAfter: 3,
};

describe('expectedContactText', () => {
  it('reads the declared plan, not the interval, where the hub judges by it', () => {
    expect(expectedContactText({ contact: plan, expectedContactIntervalS: 43_200 })).toBe(
      'once in each window: every 4m for 40s from 2026-11-27T00:00:00Z',
    );
  });

  it('says a learned plan is a prediction', () => {
    expect(
      expectedContactText({
        contact: { ...plan, source: 'learned', confidence: 0.8 },
        expectedContactIntervalS: 600,
      }),
    ).toMatch(/^once in each predicted window: /);
  });

  it('falls back to the interval without a judged plan', () => {
    expect(expectedContactText({ contact: { ...plan, judged: false }, expectedContactIntervalS: 600 })).toBe(
      'every 10 min',
    );
    expect(expectedContactText({ expectedContactIntervalS: null })).toBeNull();
  });

  it('says in one line which hub-declared windows wait for the agent to confirm them (decision 590)', () => {
    const unconfirmed = ['0 2 * * * for 30m tz Europe/Berlin'];
    expect(
      expectedContactText({
        contact: { ...plan, source: 'none', windows: [], judged: false, unconfirmed },
        expectedContactIntervalS: 600,
      }),
    ).toBe(
      'every 10 min (declared at the hub, waiting for the agent to confirm: 0 2 * * * for 30m tz Europe/Berlin)',
    );
    expect(
      expectedContactText({
        contact: { ...plan, judged: false, unconfirmed },
        expectedContactIntervalS: null,
      }),
    ).toBe('declared at the hub, waiting for the agent to confirm: 0 2 * * * for 30m tz Europe/Berlin');
  });
});
