import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ClockFilter,
  composeClocks,
  exchangeSample,
  formatClock,
  formatSourceClocks,
  parseClock,
  parseSourceClocks,
  TRUSTED_CLOCK,
} from '../src/index.js';

/** The four times of one exchange between a client whose clock reads `skew` ahead of the server's. */
function exchange(t: number, skew: number, up: number, down: number, work = 5) {
  const t0 = t + skew;
  const t1 = t + up;
  const t2 = t1 + work;
  const t3 = t + up + work + down + skew;
  return [t0, t1, t2, t3] as const;
}

describe('clock offsets per hop', () => {
  it('finds the client clock minus the server clock, within half the round trip, over a symmetric link', () => {
    const s = exchangeSample(...exchange(1_000_000, 420_000, 2000, 2000));
    expect(s).toMatchObject({ offsetMs: 420_000, uncertaintyMs: 2000, rttMs: 4000 });
  });

  it('keeps the bias of an asymmetric link within the uncertainty', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -86_400_000, max: 86_400_000 }),
        fc.integer({ min: 0, max: 3_000_000 }),
        fc.integer({ min: 0, max: 3_000_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        (skew, up, down, work) => {
          const s = exchangeSample(...exchange(1_700_000_000_000, skew, up, down, work));
          if (!s) return false;
          return Math.abs(s.offsetMs - skew) <= s.uncertaintyMs && s.uncertaintyMs <= (up + down) / 2 + 1;
        },
      ),
    );
    // 1.5 s up, 3 s down: the estimate is 0.75 s off, and says it may be up to 2.25 s off.
    const s = exchangeSample(...exchange(0, 420_000, 1500, 3000, 0));
    expect(s).toMatchObject({ offsetMs: 420_000 + 750, uncertaintyMs: 2250 });
  });

  it('refuses four times no exchange can give', () => {
    expect(exchangeSample(100, 50, 40, 200)).toBeNull(); // server replied before it received
    expect(exchangeSample(100, 0, 1000, 150)).toBeNull(); // server took longer than the round trip
    expect(exchangeSample(100, 0, 0, 50)).toBeNull(); // answer before the question
  });

  it('takes the sample with the least round trip of its window, as NTP’s clock filter does', () => {
    const f = new ClockFilter(3);
    expect(f.best(0)).toBeNull();
    const at = (up: number, down: number) => exchangeSample(...exchange(10_000, 300, up, down)) as never;
    f.add(at(900, 100)); // 1 s round trip, 400 ms bias
    f.add(at(50, 60)); // the best: 110 ms round trip
    f.add(at(500, 500));
    expect(f.best(10_415)).toEqual({ offsetMs: 305, uncertaintyMs: 55 });
    // The window moves on: the best sample leaves it after three newer ones.
    f.add(at(400, 400));
    f.add(at(600, 300));
    f.add(at(200, 250));
    expect(f.best(10_755)).toEqual({ offsetMs: 325, uncertaintyMs: 225 });
  });

  it('lets an old estimate grow less certain with its age (15 ppm)', () => {
    const f = new ClockFilter();
    f.add({ offsetMs: 10, uncertaintyMs: 40, rttMs: 80, at: 0 });
    expect(f.best(3_600_000)).toEqual({ offsetMs: 10, uncertaintyMs: 94 });
  });

  it('composes along a path: offsets and uncertainties add, a trusted source stays uncorrected', () => {
    const agentToRelay = { offsetMs: 420_000, uncertaintyMs: 2000 };
    const relayToHub = { offsetMs: -90_000, uncertaintyMs: 15 };
    expect(composeClocks(agentToRelay, relayToHub)).toEqual({ offsetMs: 330_000, uncertaintyMs: 2015 });
    expect(composeClocks(TRUSTED_CLOCK, relayToHub)).toEqual(TRUSTED_CLOCK);
    // the error bound of the composition holds whatever each hop's error is within its own bound
    fc.assert(
      fc.property(
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        (ea, eb) => {
          const c = composeClocks(agentToRelay, relayToHub);
          const truth = 420_000 + ea * 2000 + (-90_000 + eb * 15);
          return Math.abs(c.offsetMs - truth) <= c.uncertaintyMs + 1e-9;
        },
      ),
    );
  });

  it('writes and reads the header values, and ignores anything malformed', () => {
    expect(formatClock({ offsetMs: -310.4, uncertaintyMs: 39.2 })).toBe('-310;u=40');
    expect(parseClock('-310;u=40')).toEqual({ offsetMs: -310, uncertaintyMs: 40 });
    expect(parseClock('trusted')).toEqual(TRUSTED_CLOCK);
    for (const bad of ['', '12', '1;u=-3', '1e3;u=1', '99999999999999;u=1', 'trusted;u=1'])
      expect(parseClock(bad)).toBeNull();
    const clocks = new Map([
      ['mars-base/a1', { offsetMs: 420_001, uncertaintyMs: 2010 }],
      ['ship-7/a2', TRUSTED_CLOCK],
      ['Not A Source', { offsetMs: 1, uncertaintyMs: 1 }],
    ]);
    const text = formatSourceClocks(clocks);
    expect(text).toBe('mars-base/a1=420001;u=2010, ship-7/a2=trusted');
    expect(parseSourceClocks(`${text}, junk, x/y=oops`)).toEqual(
      new Map([
        ['mars-base/a1', { offsetMs: 420_001, uncertaintyMs: 2010 }],
        ['ship-7/a2', TRUSTED_CLOCK],
      ]),
    );
  });

  it('leaves out the sources that do not fit the header budget', () => {
    const many = new Map(
      Array.from({ length: 500 }, (_, i) => [`site-${i}/agent`, { offsetMs: -i, uncertaintyMs: 9 }] as const),
    );
    const text = formatSourceClocks(many, 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    const back = parseSourceClocks(text);
    expect(back.size).toBeGreaterThan(20);
    expect(back.get('site-0/agent')).toEqual({ offsetMs: 0, uncertaintyMs: 9 });
  });
});
