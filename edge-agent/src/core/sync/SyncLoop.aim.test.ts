import { describe, expect, it } from 'vitest';
import type { PushOutcome } from './SyncEngine.js';
import { SyncLoop } from './SyncLoop.js';
import { WindowAim } from './windowAim.js';

const FROM = Date.parse('2026-11-27T00:00:00Z');
const down: PushOutcome = { kind: 'unreachable', errors: ['connect ECONNREFUSED'] };

/**
 * The loop's waits pass through the site's contact plan (decision 450): with the default backoff cap
 * (900 s) and a link down between windows, the agent still wakes as the next 1-minute window opens.
 */
describe('SyncLoop aimed at contact windows', () => {
  it('never sleeps past the next window opening, whatever the backoff', async () => {
    let now = FROM + 70_000; // just after the first window (00:00–00:01)
    const timers: Array<{ ms: number; fn: () => void; cancelled: boolean }> = [];
    const aim = new WindowAim(['every 5m for 1m from 2026-11-27T00:00:00Z'], 900_000);
    const loop = new SyncLoop({
      engine: {
        pushOnce: async () => down,
        pullOnce: async () => {
          throw new Error('no pull while the link is down');
        },
        uploadBlobsOnce: async () => 0,
      },
      intervalMs: 30_000,
      backoffBaseMs: 5000,
      backoffCapMs: 900_000,
      setTimer: (ms, fn) => {
        const t = { ms, fn, cancelled: false };
        timers.push(t);
        return () => {
          t.cancelled = true;
        };
      },
      random: () => 1, // the longest backoff each time: the worst case
      log: { info: () => {}, warn: () => {} },
      now: () => now,
      aim: (ms, t) => aim.wait(ms, t),
    });
    const fire = async () => {
      const t = timers.filter((x) => !x.cancelled).at(-1)!;
      t.cancelled = true;
      now += t.ms;
      t.fn();
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      return t.ms;
    };
    loop.start();
    await fire(); // the first cycle, at start
    const wakes: number[] = [];
    for (let i = 0; i < 40; i++) {
      await fire();
      wakes.push(now);
    }
    await loop.stop();
    // Every window in that time was tried at its opening and at least every 15 s inside it.
    for (const start of [FROM + 5 * 60_000, FROM + 10 * 60_000]) {
      expect(wakes).toContain(start);
      const inside = wakes.filter((t) => t >= start && t < start + 60_000);
      expect(inside.length).toBeGreaterThanOrEqual(4);
    }
    // And no wait ever ran past an opening.
    expect(Math.max(...timers.map((t) => t.ms))).toBeLessThanOrEqual(5 * 60_000);
  });
});
