import { until as untilReached } from '@driftline/protocol/testing';
import { describe, expect, it } from 'vitest';
import type { PullOutcome } from './SyncEngine.js';
import { SyncLoop } from './SyncLoop.js';

const held: PullOutcome = {
  upstream: 'u',
  acks: 0,
  planRequests: 0,
  approvals: 0,
  refused: 0,
  rejections: 0,
  resumed: false,
  errors: [],
  held: true,
  heldS: 0,
  keep: 2,
  holdMaxS: 900,
};

describe('SyncLoop beside a long upload (docs/decisions/340-no-gap-between-held-pulls.md)', () => {
  it('keeps both held pulls open at a relay that keeps two while its first cycle is still uploading', async () => {
    const open: Array<{ waitS: number }> = [];
    let uploaded = () => {};
    const loop = new SyncLoop({
      engine: {
        pushOnce: async () => ({ kind: 'pushed', upstream: 'u', receipts: [], bytes: 10 }),
        pullOnce: (hold) =>
          new Promise((resolve) => {
            const waitS = hold?.waitS ?? 0;
            if (waitS === 0) return resolve(held);
            const pull = { waitS };
            open.push(pull);
            hold?.signal?.addEventListener('abort', () => {
              open.splice(open.indexOf(pull), 1);
              resolve({ ...held, upstream: null, errors: ['u: aborted'] });
            });
          }),
        // a detail going up for minutes: it ends only when the test says so
        uploadBlobsOnce: () =>
          new Promise((resolve) => {
            uploaded = () => resolve(1);
          }),
      },
      intervalMs: 30_000,
      holdS: 3600,
      backoffBaseMs: 1000,
      backoffCapMs: 8000,
      setTimer: (ms, fn) => {
        const t = setTimeout(fn, ms);
        return () => clearTimeout(t);
      },
      random: () => 1,
      log: { info: () => {}, warn: () => {} },
    });
    loop.start();
    // The loop's first pull, its answer and the standing run's start take a few turns of the event loop and
    // may take a timer's pause (a quick empty answer), not a fixed number: wait for the state, loudly.
    await untilReached(() => open.length >= 2, 'two held pulls open beside the upload');
    expect(open.map((p) => p.waitS)).toEqual([3600, 3600]);
    const stopping = loop.stop();
    uploaded();
    await stopping;
    expect(open).toEqual([]);
  });
});
