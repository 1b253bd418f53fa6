import { until as untilReached } from '@driftline/protocol/testing';
import { describe, expect, it } from 'vitest';
import type { PullOutcome } from './SyncEngine.js';
import { SyncLoop } from './SyncLoop.js';

const held = (upstream: string): PullOutcome => ({
  upstream,
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
});

describe('SyncLoop with two upstreams (docs/decisions/410-independent-downlinks.md)', () => {
  it('keeps the honest upstream’s held pulls open and pushes on while the other never answers a pull', async () => {
    const open: Array<{ upstream: string | undefined; waitS: number }> = [];
    const silent: Array<string | undefined> = [];
    let pushes = 0;
    const loop = new SyncLoop({
      engine: {
        pushOnce: async () => {
          pushes++;
          return { kind: 'pushed', upstream: 'honest', receipts: [], bytes: 10 };
        },
        pullOnce: (hold, only) =>
          new Promise((resolve) => {
            // the hostile upstream holds every pull without a word, until the agent stops
            if (only === 'silent') {
              silent.push(only);
              hold?.signal?.addEventListener('abort', () =>
                resolve({ ...held('silent'), upstream: null, errors: ['silent: aborted'] }),
              );
              return;
            }
            const waitS = hold?.waitS ?? 0;
            if (waitS === 0) return resolve(held('honest'));
            const pull = { upstream: only, waitS };
            open.push(pull);
            hold?.signal?.addEventListener('abort', () => {
              open.splice(open.indexOf(pull), 1);
              resolve({ ...held('honest'), upstream: null, errors: ['honest: aborted'] });
            });
          }),
        uploadBlobsOnce: async () => 0,
      },
      upstreams: ['silent', 'honest'],
      intervalMs: 20,
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
    await untilReached(
      () => open.length >= 2 && pushes >= 3,
      'two held pulls open at the honest upstream and three cycles pushed',
    );
    expect(open).toEqual([
      { upstream: 'honest', waitS: 3600 },
      { upstream: 'honest', waitS: 3600 },
    ]);
    // cycles went on (one push each) while the silent lane's one pull stayed unanswered, never pulled twice
    expect(pushes).toBeGreaterThanOrEqual(3);
    expect(silent).toEqual(['silent']);
    await loop.stop();
    expect(open).toEqual([]);
  });
});
