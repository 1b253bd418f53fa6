import { describe, expect, it } from 'vitest';
import { type SetTimer, Ticker } from './Ticker.js';

/** Timers the test fires by hand: no waiting on the wall clock. */
function manualTimers() {
  const armed: { ms: number; fn: () => void; live: boolean }[] = [];
  const setTimer: SetTimer = (ms, fn) => {
    const t = { ms, fn, live: true };
    armed.push(t);
    return () => {
      t.live = false;
    };
  };
  const live = () => armed.filter((t) => t.live);
  /** Fires the one live timer and lets the round finish. */
  const fire = async () => {
    const [t] = live();
    if (!t) throw new Error('no timer armed');
    t.live = false;
    t.fn();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    return t.ms;
  };
  return { setTimer, live, fire };
}

describe('Ticker', () => {
  it('runs a round, then waits what the round answered', async () => {
    const m = manualTimers();
    const waits = [0, 250, 1000];
    let rounds = 0;
    const t = new Ticker({ step: async () => waits[rounds++] ?? 9, restMs: 60_000, setTimer: m.setTimer });
    t.start();
    expect(await m.fire()).toBe(0);
    expect(await m.fire()).toBe(0);
    expect(await m.fire()).toBe(250);
    expect(m.live().map((x) => x.ms)).toEqual([1000]);
    expect(rounds).toBe(3);
  });

  it('runs a round at once when kicked while waiting', async () => {
    const m = manualTimers();
    let rounds = 0;
    const t = new Ticker({
      step: async () => {
        rounds++;
        return 60_000;
      },
      restMs: 60_000,
      setTimer: m.setTimer,
    });
    t.start();
    await m.fire();
    t.kick();
    expect(m.live().map((x) => x.ms)).toEqual([0]);
    await m.fire();
    expect(rounds).toBe(2);
  });

  it('runs another round right after the current one when kicked during it', async () => {
    const m = manualTimers();
    let release = () => {};
    let rounds = 0;
    const t = new Ticker({
      step: () => {
        rounds++;
        return new Promise<number>((r) => {
          release = () => r(60_000);
        });
      },
      restMs: 60_000,
      setTimer: m.setTimer,
    });
    t.start();
    const firing = m.fire();
    expect(t.busy).toBe(true);
    t.kick();
    expect(m.live()).toEqual([]); // never two rounds at once
    release();
    await firing;
    expect(m.live().map((x) => x.ms)).toEqual([0]);
    expect(rounds).toBe(1);
  });

  it('rests after maxBurst rounds in a row that asked for more', async () => {
    const m = manualTimers();
    const t = new Ticker({ step: async () => 0, restMs: 5000, maxBurst: 3, setTimer: m.setTimer });
    t.start();
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      await m.fire();
      waits.push(m.live()[0]?.ms ?? -1);
    }
    expect(waits).toEqual([0, 0, 5000, 0]);
  });

  it('reports a round that threw and waits what onError answers', async () => {
    const m = manualTimers();
    const seen: unknown[] = [];
    const t = new Ticker({
      step: async () => {
        throw new Error('boom');
      },
      restMs: 5000,
      onError: (e) => {
        seen.push((e as Error).message);
        return 700;
      },
      setTimer: m.setTimer,
    });
    t.start();
    await m.fire();
    expect(seen).toEqual(['boom']);
    expect(m.live().map((x) => x.ms)).toEqual([700]);
  });

  it('stops: the timer is cancelled, the round in progress is awaited, kicks do nothing', async () => {
    const m = manualTimers();
    let release = () => {};
    let finished = false;
    const t = new Ticker({
      step: () =>
        new Promise<number>((r) => {
          release = () => {
            finished = true;
            r(0);
          };
        }),
      restMs: 5000,
      setTimer: m.setTimer,
    });
    t.kick(); // before start: nothing
    expect(m.live()).toEqual([]);
    t.start();
    const firing = m.fire();
    const stopped = t.stop();
    release();
    await stopped;
    await firing;
    expect(finished).toBe(true);
    t.kick();
    expect(m.live()).toEqual([]);
  });

  it('runs on real timers by default', async () => {
    let rounds = 0;
    let third = () => {};
    const thirdRound = new Promise<void>((r) => {
      third = r;
    });
    const t = new Ticker({
      step: async () => {
        if (++rounds < 3) return 0;
        third();
        return 60_000;
      },
      restMs: 60_000,
    });
    t.start();
    await thirdRound; // the real timers ran the rounds between (the test's timeout bounds it)
    await t.stop();
    expect(rounds).toBe(3);
  });
});
