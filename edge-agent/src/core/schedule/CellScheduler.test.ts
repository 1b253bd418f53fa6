import { describe, expect, it } from 'vitest';
import { type CellRef, CellScheduler } from './CellScheduler.js';

function harness(maxParallel: number) {
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const timers: Array<{ ms: number; fn: () => void; cancelled: boolean }> = [];
  const s = new CellScheduler({
    maxParallel,
    runCell: (c: CellRef) =>
      new Promise<void>((resolve) => {
        const k = `${c.environment}/${c.component}`;
        started.push(k);
        finishers.set(k, resolve);
      }),
    setTimer: (ms, fn) => {
      const t = { ms, fn, cancelled: false };
      timers.push(t);
      return () => {
        t.cancelled = true;
      };
    },
    random: () => 0.5,
    onError: () => {},
  });
  const finish = async (k: string) => {
    finishers.get(k)?.();
    finishers.delete(k);
    await new Promise((r) => setImmediate(r));
  };
  return { s, started, finish, timers };
}

const cell = (component: string, environment = 'prod') => ({ component, environment });

describe('CellScheduler', () => {
  it('never runs more than maxParallel cells at once, and starts the next when one finishes', async () => {
    const h = harness(2);
    for (const c of ['a', 'b', 'c']) h.s.trigger(cell(c), 'schedule');
    expect(h.started).toEqual(['prod/a', 'prod/b']);
    await h.finish('prod/a');
    expect(h.started).toEqual(['prod/a', 'prod/b', 'prod/c']);
  });

  it('never runs one cell twice at once: a trigger while it runs waits, a second one coalesces', async () => {
    const h = harness(4);
    h.s.trigger(cell('a'), 'schedule');
    expect(h.s.trigger(cell('a'), 'request')).toBe('queued');
    expect(h.s.trigger(cell('a'), 'request')).toBe('coalesced');
    expect(h.started).toEqual(['prod/a']);
    await h.finish('prod/a');
    expect(h.started).toEqual(['prod/a', 'prod/a']);
  });

  it('delays scheduled runs by random jitter', () => {
    const h = harness(1);
    h.s.trigger(cell('a'), 'schedule', 60_000);
    expect(h.started).toEqual([]);
    expect(h.timers[0]?.ms).toBe(30_000);
    expect(h.s.delayed).toBe(1); // a round under way: its result's batch is told more are coming
    h.timers[0]?.fn();
    expect(h.started).toEqual(['prod/a']);
    expect(h.s.delayed).toBe(0);
  });

  it('on stop, cancels timers, drops the queue and waits for running cells', async () => {
    const h = harness(1);
    h.s.trigger(cell('a'), 'schedule');
    h.s.trigger(cell('b'), 'schedule');
    h.s.trigger(cell('c'), 'schedule', 1000);
    let stopped = false;
    const done = h.s.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    await h.finish('prod/a');
    await done;
    expect(stopped).toBe(true);
    expect(h.started).toEqual(['prod/a']);
    expect(h.timers[0]?.cancelled).toBe(true);
    expect(h.s.trigger(cell('d'), 'manual')).toBe('stopped');
  });
});
