import { describe, expect, it } from 'vitest';
import type { RecordRunInput, RecordRunResult } from '../../ports/Ledger.js';
import { RecordBatcher } from './RecordBatcher.js';

function harness(over: { maxBatch?: number; failOn?: string; moreComing?: () => boolean } = {}) {
  const commits: string[][] = [];
  const more: boolean[] = [];
  const timers: Array<{ ms: number; fn: () => void; cancelled: boolean }> = [];
  const b = new RecordBatcher({
    recordMany: (inputs, opts) => {
      more.push(opts.moreComing);
      if (over.failOn && inputs.some((i) => i.runId === over.failOn)) throw new Error('disk full');
      commits.push(inputs.map((i) => i.runId));
      return inputs.map((): RecordRunResult => ({ epoch: 1, unchanged: false, sealed: false }));
    },
    setTimer: (ms, fn) => {
      const t = { ms, fn, cancelled: false };
      timers.push(t);
      return () => {
        t.cancelled = true;
      };
    },
    windowMs: 5000,
    maxBatch: over.maxBatch ?? 100,
    moreComing: over.moreComing,
  });
  const fire = () => {
    for (const t of timers.splice(0)) if (!t.cancelled) t.fn();
  };
  const input = (runId: string) => ({ runId }) as RecordRunInput;
  const settled = (p: Promise<unknown>) => {
    const s = { done: false, error: undefined as unknown };
    p.then(
      () => {
        s.done = true;
      },
      (e) => {
        s.done = true;
        s.error = e;
      },
    );
    return s;
  };
  const tick = () => new Promise((r) => setImmediate(r));
  return { b, commits, more, timers, fire, input, settled, tick };
}

describe('RecordBatcher', () => {
  it('commits results that finish within the window together, in one store call', async () => {
    const h = harness();
    const ps = ['r1', 'r2', 'r3'].map((id) => h.b.record(h.input(id)));
    expect(h.commits).toEqual([]);
    expect(h.timers.map((t) => t.ms)).toEqual([5000]);
    h.fire();
    await Promise.all(ps);
    expect(h.commits).toEqual([['r1', 'r2', 'r3']]);
  });

  it('settles no result before the commit that holds it', async () => {
    const h = harness();
    const s = h.settled(h.b.record(h.input('r1')));
    await h.tick();
    expect(s.done).toBe(false);
    h.b.flush();
    await h.tick();
    expect(s.done).toBe(true);
    expect(h.commits).toEqual([['r1']]);
  });

  it('commits at once when the batch is full, and on flush without waiting for the timer', async () => {
    const h = harness({ maxBatch: 2 });
    h.b.record(h.input('r1'));
    h.b.record(h.input('r2'));
    expect(h.commits).toEqual([['r1', 'r2']]);
    h.b.record(h.input('r3'));
    h.b.flush();
    expect(h.commits).toEqual([['r1', 'r2'], ['r3']]);
    expect(h.b.waiting).toBe(0);
    h.fire(); // the cancelled window timer commits nothing more
    expect(h.commits).toHaveLength(2);
  });

  it('commits at once when no other result may come soon, and waits while one may', () => {
    let running = 2;
    const h = harness({ moreComing: () => running > 0 });
    running--;
    h.b.record(h.input('r1'));
    expect(h.commits).toEqual([]);
    running--;
    h.b.record(h.input('r2'));
    expect(h.commits).toEqual([['r1', 'r2']]);
  });

  it('tells the ledger whether other results may follow each commit (it holds results out of its document meanwhile)', () => {
    let running = 3;
    const h = harness({ maxBatch: 1, moreComing: () => running > h.b.waiting });
    h.b.record(h.input('r1'));
    running--;
    h.b.record(h.input('r2'));
    running--;
    h.b.record(h.input('r3'));
    expect(h.commits).toEqual([['r1'], ['r2'], ['r3']]);
    expect(h.more).toEqual([true, true, false]);
  });

  it('records the others one by one when a batch fails, and rejects only the result that cannot be recorded', async () => {
    const h = harness({ failOn: 'bad' });
    const good1 = h.settled(h.b.record(h.input('g1')));
    const bad = h.settled(h.b.record(h.input('bad')));
    const good2 = h.settled(h.b.record(h.input('g2')));
    h.b.flush();
    await h.tick();
    expect(h.commits).toEqual([['g1'], ['g2']]);
    expect(good1).toEqual({ done: true, error: undefined });
    expect(good2).toEqual({ done: true, error: undefined });
    expect((bad.error as Error).message).toBe('disk full');
  });
});
