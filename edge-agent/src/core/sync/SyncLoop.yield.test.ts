import { describe, expect, it } from 'vitest';
import type { PullOutcome } from './SyncEngine.js';
import { SyncLoop } from './SyncLoop.js';

const pulledNothing: PullOutcome = {
  upstream: 'u',
  acks: 0,
  planRequests: 0,
  approvals: 0,
  refused: 0,
  rejections: 0,
  resumed: false,
  errors: [],
};

/**
 * A loop whose push sees a result recorded while it is on its way; uploads note what they are told.
 * `blobsPerCycle` says how many blobs wait in each cycle (default three every time).
 */
function harness(blobsPerCycle: number[] = []) {
  const timers: Array<{ ms: number; fn: () => void; cancelled: boolean }> = [];
  const told: boolean[][] = [];
  let loop: SyncLoop | null = null;
  loop = new SyncLoop({
    engine: {
      pushOnce: async () => {
        await new Promise((r) => setImmediate(r));
        loop?.kick(); // a plan finishes while the push travels
        return { kind: 'pushed', upstream: 'u', receipts: [], bytes: 10 };
      },
      pullOnce: async () => pulledNothing,
      uploadBlobsOnce: async (_progress, _signal, yieldToResults) => {
        // Three blobs wait; each is sent unless told to yield before it.
        const answers: boolean[] = [];
        const waiting = blobsPerCycle.shift() ?? 3;
        for (let i = 0; i < waiting; i++) {
          const y = yieldToResults?.() ?? false;
          answers.push(y);
          if (y) break;
        }
        told.push(answers);
        return answers.filter((y) => !y).length;
      },
    },
    intervalMs: 30_000,
    backoffBaseMs: 1000,
    backoffCapMs: 8000,
    setTimer: (ms, fn) => {
      const t = { ms, fn, cancelled: false };
      timers.push(t);
      return () => {
        t.cancelled = true;
      };
    },
    random: () => 1,
    log: { info: () => {}, warn: () => {} },
  });
  const fire = async () => {
    const t = timers.filter((x) => !x.cancelled).at(-1)!;
    t.cancelled = true;
    t.fn();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    return timers.filter((x) => !x.cancelled).at(-1)?.ms;
  };
  return { loop, told, fire };
}

describe('SyncLoop and results recorded while it cycles', () => {
  it('lets a waiting result go before the blobs and starts the next cycle at once', async () => {
    const h = harness();
    h.loop.start();
    expect(await h.fire()).toBe(0);
    expect(h.told[0]).toEqual([true]);
  });

  it('sends one blob first when the blobs already gave way a cycle, so they never starve', async () => {
    const h = harness();
    h.loop.start();
    await h.fire();
    expect(await h.fire()).toBe(0);
    expect(h.told[1]).toEqual([false, true]);
    await h.fire();
    expect(h.told[2]).toEqual([true]);
  });

  it('does not count a cycle with no blob as blobs that gave way: a new plan’s detail never goes before its result', async () => {
    const h = harness([0, 3]);
    h.loop.start();
    await h.fire(); // a result came during the push, but no blob was waiting
    expect(h.told[0]).toEqual([]);
    await h.fire(); // the next plan's result comes during the push, its detail waits: the result goes first
    expect(h.told[1]).toEqual([true]);
  });

  it('pushes a result recorded during a long blob upload beside it, not after it', async () => {
    const calls: string[] = [];
    let release = () => {};
    const blobInFlight = new Promise<void>((r) => {
      release = r;
    });
    let started = () => {};
    const uploadStarted = new Promise<void>((r) => {
      started = r;
    });
    const loop = new SyncLoop({
      engine: {
        pushOnce: async () => {
          calls.push('push');
          return { kind: 'pushed', upstream: 'u', receipts: [], bytes: 10 };
        },
        pullOnce: async () => pulledNothing,
        uploadBlobsOnce: async () => {
          calls.push('upload starts');
          started();
          await blobInFlight; // one big blob on a slow link
          calls.push('upload ends');
          return 1;
        },
      },
      intervalMs: 30_000,
      backoffBaseMs: 1000,
      backoffCapMs: 8000,
      setTimer: (ms, fn) => {
        const t = setTimeout(fn, ms === 0 ? 0 : 60_000);
        return () => clearTimeout(t);
      },
      random: () => 1,
      log: { info: () => {}, warn: () => {} },
    });
    loop.start();
    await uploadStarted;
    loop.kick(); // a plan result is recorded while the blob goes up
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['push', 'upload starts', 'push']);
    release();
    await loop.stop();
    expect(calls.slice(0, 4)).toEqual(['push', 'upload starts', 'push', 'upload ends']);
  });
});
