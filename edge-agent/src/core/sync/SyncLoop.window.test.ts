import { until as untilReached } from '@driftline/protocol/testing';
import { describe, expect, it } from 'vitest';
import type { PullOutcome, PushOutcome } from './SyncEngine.js';
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
const cut: PullOutcome = { ...held, upstream: null, errors: ['u: link down'], held: undefined };

/**
 * A link that went down, back as a window of the site's contact plan opens
 * (docs/decisions/645-pulls-go-as-the-window-opens.md): the held pulls go beside the probe, so the relay
 * holds one when control reaches it; outside any window a down link still costs only the probe.
 */
function loopOver(inWindow: boolean) {
  const open: Array<{ waitS: number; end: (o: PullOutcome) => void }> = [];
  let down = false;
  let pushes = 0;
  let probe = () => {};
  const loop = new SyncLoop({
    engine: {
      pushOnce: async (): Promise<PushOutcome> => {
        pushes++;
        if (pushes === 1) return { kind: 'pushed', upstream: 'u', receipts: [], bytes: 10 };
        if (pushes === 2) {
          // the link goes down: every held pull open is cut, the push finds nobody
          down = true;
          for (const p of open.splice(0)) p.end(cut);
          return { kind: 'unreachable', errors: ['u: down'] };
        }
        // the probe is on its way (minutes of light time), not answered within the test
        return new Promise((resolve) => {
          probe = () => resolve({ kind: 'unreachable', errors: ['u: stopped'] });
        });
      },
      pullOnce: (hold) =>
        new Promise((resolve) => {
          const waitS = hold?.waitS ?? 0;
          if (down) return resolve(cut);
          if (waitS === 0) return resolve(held);
          const pull = { waitS, end: resolve };
          open.push(pull);
          hold?.signal?.addEventListener('abort', () => {
            if (open.includes(pull)) open.splice(open.indexOf(pull), 1);
            resolve(cut);
          });
        }),
      uploadBlobsOnce: async () => 0,
    },
    intervalMs: 60_000,
    holdS: 3600,
    backoffBaseMs: 10,
    backoffCapMs: 20,
    setTimer: (ms, fn) => {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    },
    random: () => 1,
    log: { info: () => {}, warn: () => {} },
    // the next cycle asks first whether a window is open: the link is back by then (an event, not a timer)
    inWindow: () => {
      if (pushes >= 2) down = false;
      return inWindow;
    },
  });
  return { loop, open, pushes: () => pushes, answerProbe: () => probe() };
}

describe('SyncLoop as a window opens after a down link', () => {
  it('sends the held pulls beside the probe in a window of the contact plan', async () => {
    const w = loopOver(true);
    w.loop.start();
    await untilReached(() => w.open.length >= 2, 'two held pulls open while the link works');
    w.loop.kick();
    await untilReached(() => w.pushes() >= 3, 'the probe after the link went down');
    await untilReached(() => w.open.length >= 1, 'a held pull open beside the probe, before it answers');
    expect(w.open.every((p) => p.waitS === 3600)).toBe(true);
    const stopping = w.loop.stop();
    w.answerProbe();
    await stopping;
  });

  it('sends only the probe outside any window', async () => {
    const w = loopOver(false);
    w.loop.start();
    await untilReached(() => w.open.length >= 2, 'two held pulls open while the link works');
    w.loop.kick();
    await untilReached(() => w.pushes() >= 3, 'the probe after the link went down');
    // what a window would have opened by now it has not: the pulls wait for the probe's answer
    await new Promise((r) => setImmediate(r));
    expect(w.open).toEqual([]);
    const stopping = w.loop.stop();
    w.answerProbe();
    await stopping;
  });
});
