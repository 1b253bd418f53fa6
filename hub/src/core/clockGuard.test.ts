import { TRUSTED_CLOCK } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { type AgentClock, guardClock, STEP_CONFIRM_MS } from './clockGuard.js';

const T = 1_700_000_000_000;
const SKEW = 7 * 60_000;
const DAY = 86_400_000;
const fresh: AgentClock = {
  est: { offsetMs: null, uncertaintyMs: null, sampledAt: null },
  held: null,
  lastCreated: null,
  lastCreatedAt: null,
};

/** An agent 7 min fast, known to ± 40 ms, whose last bundle was made at true time T − 10 min. */
function settled(): AgentClock {
  return {
    est: { offsetMs: SKEW, uncertaintyMs: 40, sampledAt: T - 600_000 },
    held: null,
    lastCreated: T - 600_000 + SKEW,
    lastCreatedAt: T - 600_000,
  };
}

/** A bundle made at true time `made`, arriving at `at`, through relay-1 with the path's estimate `e`. */
const bundle = (made: number, at: number, e: { offsetMs: number; uncertaintyMs: number } | null) => ({
  created: made + SKEW,
  receivedAt: at,
  estimate: e,
  via: 'relay-1',
  changed: true,
});

describe('guardClock: time a hop cannot forge', () => {
  it('takes an honest estimate and remembers the newest bundle on both clocks', () => {
    const v = guardClock(settled(), bundle(T, T + 2000, { offsetMs: SKEW + 10, uncertaintyMs: 30 }));
    expect(v.held).toBeNull();
    expect(v.fresh).toBe(true);
    expect(v.next.est).toMatchObject({ offsetMs: SKEW + 10, uncertaintyMs: 30 });
    expect(v.next.lastCreated).toBe(T + SKEW);
    expect(v.next.lastCreatedAt).toBe(T - 10);
  });

  it('holds back the +1 day lie as a flagged estimate: it would date the bundle before the previous one', () => {
    const v = guardClock(settled(), bundle(T, T + 2000, { offsetMs: SKEW + DAY, uncertaintyMs: 0 }));
    expect(v.held).toBe('contradicts-bounds');
    expect(v.next.est.offsetMs).toBe(SKEW);
    expect(v.next.held).toMatchObject({ reason: 'contradicts-bounds', offsetMs: SKEW + DAY, via: 'relay-1' });
    // The bundle is read with the offset that stands: at its true time, within the stated uncertainty.
    expect(Math.abs((v.next.lastCreatedAt ?? 0) - T)).toBeLessThanOrEqual(40);
  });

  it('keeps a round-trip offset older than 6 h when the only new claim is impossible', () => {
    const old = settled();
    const later = T + 7 * 3_600_000;
    const v = guardClock(old, bundle(later, later + 2000, { offsetMs: SKEW + DAY, uncertaintyMs: 0 }));
    expect(v.held).toBe('contradicts-bounds');
    expect(v.next.est).toBe(old.est);
  });

  it('holds back a −90 s claim on a bundle held 90 s: a jump, the current offset stays', () => {
    const v = guardClock(settled(), bundle(T, T + 90_000, { offsetMs: SKEW - 90_000, uncertaintyMs: 0 }));
    expect(v.held).toBe('jump');
    expect(v.next.est.offsetMs).toBe(SKEW);
    expect(v.next.held).toMatchObject({ reason: 'jump', samples: 1 });
    expect(Math.abs((v.next.lastCreatedAt ?? 0) - T)).toBeLessThanOrEqual(40);
    // An honest estimate afterwards clears the flag.
    const after = guardClock(v.next, bundle(T + 60_000, T + 61_000, { offsetMs: SKEW, uncertaintyMs: 30 }));
    expect(after.held).toBeNull();
    expect(after.next.held).toBeNull();
  });

  it('takes a jump that transit proves at once (the clock was stepped forward)', () => {
    // The agent's clock jumped 30 s ahead: the current offset would date the bundle after its arrival.
    const v = guardClock(settled(), {
      ...bundle(T, T + 1000, { offsetMs: SKEW + 30_000, uncertaintyMs: 500 }),
      created: T + SKEW + 30_000,
    });
    expect(v.held).toBeNull();
    expect(v.next.est.offsetMs).toBeGreaterThan(SKEW + 29_000);
  });

  it('takes a jump that stands unchallenged for the confirmation window, and not before', () => {
    let c = settled();
    const step = -45_000; // the agent's clock set back 45 s
    const times = [T, T + 60_000, T + STEP_CONFIRM_MS / 2, T + STEP_CONFIRM_MS + 1];
    const verdicts = times.map((t) => {
      const v = guardClock(c, {
        ...bundle(t, t + 1000, { offsetMs: SKEW + step, uncertaintyMs: 50 }),
        created: t + SKEW + step,
      });
      c = v.next;
      return v;
    });
    expect(verdicts.map((v) => v.held)).toEqual(['jump', 'jump', 'jump', null]);
    expect(c.est.offsetMs).toBe(SKEW + step);
    expect(c.held).toBeNull();
  });

  it('changes nothing for a replay: neither newer than the newest bundle nor bringing changes', () => {
    const s = settled();
    const v = guardClock(s, {
      ...bundle(T - 3_600_000, T, { offsetMs: SKEW - 1000, uncertaintyMs: 0 }),
      changed: false,
    });
    expect(v.fresh).toBe(false);
    expect(v.next).toBe(s);
    expect(v.held).toBeNull();
  });

  it('bounds a relay that claims the agent’s clock is trusted', () => {
    const v = guardClock(settled(), bundle(T, T + 1000, TRUSTED_CLOCK));
    expect(v.held).toBe('contradicts-bounds'); // 0 would put a bundle made 7 min "ahead" after its arrival
    expect(v.next.est.offsetMs).toBe(SKEW);
  });

  it('starts from nothing with the path’s estimate (no earlier time to hold it against)', () => {
    const v = guardClock(fresh, bundle(T, T + 1000, { offsetMs: SKEW, uncertaintyMs: 100 }));
    expect(v.held).toBeNull();
    expect(v.next.est).toMatchObject({ offsetMs: SKEW, uncertaintyMs: 100 });
  });

  describe('through a relay enrolled without a key (decision 415)', () => {
    const unkeyed = (
      made: number,
      at: number,
      e: { offsetMs: number; uncertaintyMs: number } | null,
      upperMs?: number,
    ) => ({
      ...bundle(made, at, e),
      attested: false,
      ...(upperMs === undefined ? {} : { upperMs }),
    });

    it('never narrows the first bundle past the one-way bound: a +20 min lie moves nothing', () => {
      const v = guardClock(fresh, unkeyed(T, T + 2000, { offsetMs: SKEW + 1_200_000, uncertaintyMs: 1 }));
      expect(v.held).toBeNull();
      // the one-way bound: made no later than it arrived, uncertainty unknown
      expect(v.next.est).toMatchObject({ offsetMs: SKEW - 2000, uncertaintyMs: null });
      expect(v.next.lastCreatedAt).toBe(T + 2000);
    });

    it("takes the agent's own bound, not the claim, when the bound has an upper end", () => {
      // the agent received a plan request the hub made at T − 5 s at its T − 3 s: offset ≤ SKEW + 2 s
      const v = guardClock(fresh, unkeyed(T, T + 2000, { offsetMs: SKEW, uncertaintyMs: 1 }, SKEW + 2000));
      expect(v.held).toBeNull();
      expect(v.next.est).toMatchObject({ offsetMs: SKEW, uncertaintyMs: 2000 });
    });

    it("holds and flags a lie beyond the agent's own bound, as for a keyed relay", () => {
      const v = guardClock(
        fresh,
        unkeyed(T, T + 2000, { offsetMs: SKEW + 1_200_000, uncertaintyMs: 1 }, SKEW + 2000),
      );
      expect(v.held).toBe('contradicts-bounds');
      expect(v.next.held).toMatchObject({
        reason: 'contradicts-bounds',
        offsetMs: SKEW + 1_200_000,
        via: 'relay-1',
      });
      expect(v.next.est.uncertaintyMs).toBeNull(); // the one-way bound stands; the claim is not taken
    });

    it('bounds a keyed path by plan-request receipts too', () => {
      const v = guardClock(fresh, {
        ...bundle(T, T + 2000, { offsetMs: SKEW + 1_200_000, uncertaintyMs: 1 }),
        upperMs: SKEW + 2000,
      });
      expect(v.held).toBe('contradicts-bounds');
    });
  });
});
