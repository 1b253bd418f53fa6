import { describe, expect, it } from 'vitest';
import type { PullOutcome, PushOutcome } from './SyncEngine.js';
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

function harness(outcomes: PushOutcome[], pulls: Partial<PullOutcome>[] = []) {
  const timers: Array<{ ms: number; fn: () => void; cancelled: boolean }> = [];
  const calls: string[] = [];
  const warned: string[] = [];
  const loop = new SyncLoop({
    engine: {
      pushOnce: async () => {
        calls.push('push');
        return outcomes.shift() ?? { kind: 'idle' };
      },
      pullOnce: async () => {
        calls.push('pull');
        return { ...pulledNothing, ...pulls.shift() };
      },
      uploadBlobsOnce: async () => {
        calls.push('upload');
        return 0;
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
    log: { info: () => {}, warn: (_o: object, msg: string) => void warned.push(msg) },
  });
  const fire = async () => {
    const t = timers.filter((x) => !x.cancelled).at(-1)!;
    t.cancelled = true;
    t.fn();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    return t.ms;
  };
  return { loop, timers, calls, fire, warned };
}

const down: PushOutcome = { kind: 'unreachable', errors: ['connect ECONNREFUSED'] };

describe('SyncLoop', () => {
  it('pushes, then pulls, then uploads blobs, then waits the interval', async () => {
    const h = harness([{ kind: 'pushed', upstream: 'u', receipts: [], bytes: 10 }]);
    h.loop.start();
    await h.fire();
    expect(h.calls).toEqual(['push', 'pull', 'upload']); // push and pull leave together
    expect(h.timers.at(-1)?.ms).toBe(30_000);
  });

  it('logs a pull refused for its credential as `refused by <upstream>: <reason>`, not as a failed pull (issue 58)', async () => {
    const h = harness(
      [{ kind: 'pushed', upstream: 'u', receipts: [], bytes: 10 }],
      [{ refusals: [{ upstream: 'http://relay-1', reason: 'unauthorized: the token was revoked' }] }],
    );
    h.loop.start();
    await h.fire();
    expect(h.warned).toEqual([
      'refused by http://relay-1: unauthorized: the token was revoked (check the token in its upstreams[].tokenFile; at the relay: relay token add)',
    ]);
  });

  it('backs off while no upstream answers, capped, and does nothing but the push attempt', async () => {
    const h = harness([down, down, down, down, down]);
    h.loop.start();
    await h.fire();
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      waits.push(h.timers.at(-1)!.ms);
      await h.fire();
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000]);
    // The first attempt went out with its pull (the link was believed up); from then on, one push attempt a cycle.
    expect(h.calls.slice(0, 2)).toEqual(['push', 'pull']);
    expect(h.calls.slice(2)).toEqual(['push', 'push', 'push', 'push']);
  });

  it('waits only until the retry time of a hub rejection, then pushes again', async () => {
    const h = harness([{ kind: 'held', code: 'unknown-agent', retryInMs: 4_000 }]);
    h.loop.start();
    await h.fire();
    expect(h.calls).toEqual(['push', 'pull', 'upload']); // acks and plan requests still come down
    expect(h.timers.at(-1)?.ms).toBe(4_000);
    await h.fire();
    expect(h.timers.at(-1)?.ms).toBe(30_000);
  });

  it('cycles at once when a hub ack shows the hub takes the agent’s bundles again', async () => {
    const h = harness(
      [{ kind: 'held', code: 'unknown-agent', retryInMs: 200_000 }],
      [{ acks: 1, resumed: true }],
    );
    h.loop.start();
    await h.fire();
    expect(h.timers.at(-1)?.ms).toBe(0);
  });

  it('does not let kick() break the backoff of a down link', async () => {
    const h = harness([down]);
    h.loop.start();
    await h.fire();
    const before = h.timers.length;
    h.loop.kick();
    expect(h.timers.length).toBe(before);
  });
});

describe('SyncLoop control first', () => {
  /** An engine whose blob upload runs until released, and whose pulls say whether they were held. */
  function busy(held: boolean) {
    const calls: string[] = [];
    let release: () => void = () => {};
    const timers: Array<{ ms: number; fn: () => void; cancelled: boolean }> = [];
    let uploads = 0;
    const loop = new SyncLoop({
      engine: {
        pushOnce: async () => {
          calls.push('push');
          return { kind: 'pushed', upstream: 'u', receipts: [], bytes: 1 };
        },
        pullOnce: async (hold) => {
          calls.push(hold ? `pull(wait ${hold.waitS})` : 'pull');
          await new Promise((r) => setImmediate(r));
          return { ...pulledNothing, held: held && hold !== undefined, ...(hold ? { approvals: 1 } : {}) };
        },
        uploadBlobsOnce: () => {
          calls.push('upload');
          if (uploads++ > 0) return Promise.resolve(0);
          return new Promise<number>((r) => {
            release = () => r(1);
          });
        },
      },
      intervalMs: 30_000,
      holdS: 25,
      backoffBaseMs: 1000,
      backoffCapMs: 8000,
      setTimer: (ms, fn) => {
        const t = { ms, fn, cancelled: false };
        timers.push(t);
        return () => {
          t.cancelled = true;
        };
      },
      now: () => 0,
      random: () => 1,
      log: { info: () => {}, warn: () => {} },
    });
    const settle = async (n = 20) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    const fireInterval = async () => {
      const t = timers.find((x) => !x.cancelled && x.ms === 30_000)!;
      t.cancelled = true;
      t.fn();
      await settle();
    };
    return { loop, calls, timers, settle, fireInterval, release: () => release() };
  }

  it('pulls the downlink beside a long upload, one interval apart, where the upstream cannot hold pulls', async () => {
    const h = busy(false);
    h.loop.start();
    h.timers[0]?.fn();
    await h.settle();
    // Every pull asks whether the upstream holds pulls (wait 0); this one does not.
    expect(h.calls).toEqual(['push', 'pull(wait 0)', 'upload']);
    // The upload goes on; an interval later a pull goes out beside it, and another after that.
    await h.fireInterval();
    expect(h.calls.slice(3)).toEqual(['pull(wait 25)']);
    await h.fireInterval();
    expect(h.calls.slice(3)).toEqual(['pull(wait 25)', 'pull(wait 25)']);
    h.release();
    await h.settle();
    await h.loop.stop();
  });

  it('keeps a held pull open beside uploads and while idle where the upstream holds them', async () => {
    const h = busy(true);
    h.loop.start();
    h.timers[0]?.fn();
    await h.settle();
    // The cycle's own pull learns that the upstream holds pulls; beside the upload they go back to back.
    expect(h.calls.slice(0, 3)).toEqual(['push', 'pull(wait 0)', 'upload']);
    await h.settle(40);
    const held = h.calls.filter((c) => c === 'pull(wait 25)').length;
    expect(held).toBeGreaterThan(1); // back to back, no interval between them
    h.release();
    await h.settle(40);
    // Idle now: the standing held pull goes on, and the next cycle does not queue a pull of its own.
    const before = h.calls.length;
    await h.settle(40);
    expect(h.calls.slice(before).every((c) => c === 'pull(wait 25)')).toBe(true);
    expect(h.calls.length).toBeGreaterThan(before);
    await h.loop.stop();
  });
});
