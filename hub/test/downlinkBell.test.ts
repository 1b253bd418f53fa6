import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DownlinkBell, watchDownlink } from '../src/core/downlinkBell.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Heads as a store would answer them, changed by the test as another hub's writes would. */
function heads(initial: Record<string, number>) {
  const now = new Map(Object.entries(initial));
  let reads = 0;
  return {
    now,
    get reads() {
      return reads;
    },
    read: async (sites: readonly string[]) => {
      reads++;
      return new Map(sites.filter((s) => now.has(s)).map((s) => [s, now.get(s) as number]));
    },
  };
}

describe('the downlink bell and a held watch (decision 620)', () => {
  const cursors = new Map([
    ['ship-7', 5],
    ['ship-9', 0],
  ]);

  it('ends a quiet watch at its hold with no site, having read the store twice', async () => {
    const h = heads({ 'ship-7': 5 });
    const bell = new DownlinkBell();
    const w = watchDownlink({ heads: h.read, bell }, cursors, 60_000, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(bell.size).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await w).toEqual([]);
    expect(h.reads).toBe(2);
    expect(bell.size).toBe(0);
  });

  it('wakes at a ring for a watched site, not for another', async () => {
    const h = heads({ 'ship-7': 5 });
    const bell = new DownlinkBell();
    let done: string[] | null = null;
    void watchDownlink({ heads: h.read, bell }, cursors, 60_000, new AbortController().signal).then((s) => {
      done = s;
    });
    await vi.advanceTimersByTimeAsync(10);
    bell.ring(['ship-8']);
    await vi.advanceTimersByTimeAsync(10);
    expect(done).toBeNull();
    h.now.set('ship-7', 6);
    bell.ring(['ship-7']);
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toEqual(['ship-7']);
  });

  it('wakes every watch at a ring of every site (a list another hub could not send), and each reads the store', async () => {
    const h = heads({ 'ship-7': 6 });
    const bell = new DownlinkBell();
    const other = new Map([['ship-8', 0]]);
    const found = Promise.all([
      watchDownlink({ heads: h.read, bell }, new Map([['ship-7', 6]]), 60_000, new AbortController().signal),
      watchDownlink({ heads: h.read, bell }, other, 60_000, new AbortController().signal),
    ]);
    await vi.advanceTimersByTimeAsync(10);
    expect(h.reads).toBe(2);
    h.now.set('ship-7', 7);
    h.now.set('ship-8', 1);
    bell.ringEvery();
    await vi.advanceTimersByTimeAsync(0);
    expect(await found).toEqual([['ship-7'], ['ship-8']]);
    expect(h.reads).toBe(4);
  });

  it("learns another hub's write (no ring here) at the next recheck of a shared store", async () => {
    const h = heads({});
    const bell = new DownlinkBell();
    let done: string[] | null = null;
    void watchDownlink(
      { heads: h.read, bell, recheckMs: 5000 },
      cursors,
      60_000,
      new AbortController().signal,
    ).then((s) => {
      done = s;
    });
    await vi.advanceTimersByTimeAsync(1000);
    h.now.set('ship-9', 1);
    await vi.advanceTimersByTimeAsync(3999);
    expect(done).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toEqual(['ship-9']);
  });

  it('lets go at once when the request goes away', async () => {
    const bell = new DownlinkBell();
    const gone = new AbortController();
    const w = watchDownlink({ heads: heads({}).read, bell }, cursors, 60_000, gone.signal);
    await vi.advanceTimersByTimeAsync(10);
    gone.abort();
    expect(await w).toEqual([]);
    expect(bell.size).toBe(0);
  });
});

describe('a commit that lands between the watch reading the store and waiting (decision 620)', () => {
  it('still wakes the watch: it listened before it read', async () => {
    const bell = new DownlinkBell();
    const now = new Map<string, number>();
    let reads = 0;
    const heads = async (sites: readonly string[]) => {
      reads++;
      const seen = new Map(sites.filter((s) => now.has(s)).map((s) => [s, now.get(s) as number]));
      // the commit lands while this read's answer is on its way back
      if (reads === 1) {
        now.set('ship-9', 1);
        bell.ring(['ship-9']);
      }
      return seen;
    };
    let done: string[] | null = null;
    void watchDownlink({ heads, bell }, new Map([['ship-9', 0]]), 60_000, new AbortController().signal).then(
      (s) => {
        done = s;
      },
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toEqual(['ship-9']);
    expect(bell.size).toBe(0);
  });
});
