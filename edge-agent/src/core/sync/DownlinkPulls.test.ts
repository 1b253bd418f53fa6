import { describe, expect, it } from 'vitest';
import { DownlinkPulls } from './DownlinkPulls.js';
import type { PullOutcome } from './SyncEngine.js';

const nothing: PullOutcome = {
  upstream: 'u',
  acks: 0,
  planRequests: 0,
  approvals: 0,
  refused: 0,
  rejections: 0,
  resumed: false,
  errors: [],
  held: true,
};
const cut: PullOutcome = {
  ...nothing,
  upstream: null,
  errors: ['u: HTTP 504 gateway timeout'],
  held: undefined,
};

/**
 * A path whose idle timeout is `idleS`: a pull held longer is cut then (after `cutAfterS` when given, a
 * link that goes down instead); the fake clock moves by how long each pull was open.
 */
function path(idleS: number) {
  let now = 0;
  const asked: number[] = [];
  const warned: Array<{ cutMs: number; holdS: number }> = [];
  const downAt: number[] = [];
  const pulls = new DownlinkPulls({
    engine: {
      pullOnce: async (hold) => {
        const waitS = hold?.waitS ?? 0;
        asked.push(waitS);
        const outage = downAt.shift();
        if (outage !== undefined) {
          now += outage * 1000;
          return cut;
        }
        now += Math.min(waitS, idleS) * 1000;
        return waitS > idleS ? cut : nothing;
      },
    },
    intervalMs: 30_000,
    holdS: 900,
    setTimer: () => () => {},
    now: () => now,
    onHoldCut: (cutMs, holdS) => warned.push({ cutMs, holdS }),
  });
  return { pulls, asked, warned, downAt };
}

describe('DownlinkPulls on a path that cuts long holds', () => {
  it('asks for less once two held pulls were cut after the same time, and says so once', async () => {
    const p = path(60);
    for (let i = 0; i < 4; i++) await p.pulls.pull(true);
    expect(p.asked).toEqual([900, 900, 48, 48]);
    expect(p.warned).toEqual([{ cutMs: 60_000, holdS: 48 }]);
  });

  it('keeps its hold after one cut alone, as when the link went down', async () => {
    const p = path(3600);
    p.downAt.push(300); // the link drops 300 s into the first hold
    for (let i = 0; i < 3; i++) await p.pulls.pull(true);
    expect(p.asked).toEqual([900, 900, 900]);
    expect(p.warned).toEqual([]);
  });

  it('does not take two cuts of different lengths for an idle timeout', async () => {
    const p = path(3600);
    p.downAt.push(300, 120);
    for (let i = 0; i < 3; i++) await p.pulls.pull(true);
    expect(p.asked).toEqual([900, 900, 900]);
    expect(p.warned).toEqual([]);
  });
});

describe('DownlinkPulls standing, when one lane fails', () => {
  it("ends the run at once, cutting the other lane's held pull, so the cycle pulls again now", async () => {
    // The first pull of the run learns that the upstream keeps two; then lane A's pull fails (its token
    // revoked) while lane B's is held for its whole hold (sent with the new token: the link works).
    const held: Array<{ signal?: AbortSignal; resolve: (o: PullOutcome) => void }> = [];
    // resolves once `n` pulls are open: the engine's own call is the event waited on
    const waiting: Array<{ n: number; resolve: () => void }> = [];
    const opened = (n: number) =>
      new Promise<void>((resolve) => {
        if (held.length >= n) resolve();
        else waiting.push({ n, resolve });
      });
    const pulls = new DownlinkPulls({
      engine: {
        pullOnce: (hold) =>
          new Promise<PullOutcome>((resolve) => {
            const entry = { signal: hold?.signal, resolve };
            hold?.signal?.addEventListener('abort', () => resolve({ ...cut, errors: ['u: aborted'] }));
            held.push(entry);
            for (const w of waiting.filter((w) => held.length >= w.n)) w.resolve();
          }),
      },
      intervalMs: 30_000,
      holdS: 900,
      setTimer: () => () => {},
      now: () => 0,
    });
    // learn that it holds and keeps two
    const first = pulls.pull(true);
    await opened(1);
    held[0]?.resolve({ ...nothing, keep: 2, heldS: 900 });
    await first;
    const outcomes: PullOutcome[] = [];
    const run = pulls.standing(
      () => true,
      (o) => outcomes.push(o),
    );
    await opened(3);
    expect(held).toHaveLength(3); // two lanes, a pull each
    held[1]?.resolve({ ...cut, errors: ['u: HTTP 401 the token was revoked'] });
    // the run ends without waiting for lane B's hold to end: its pull is cut by the agent itself
    await run;
    expect(held[2]?.signal?.aborted).toBe(true);
    expect(outcomes.map((o) => o.errors[0])).toEqual(['u: HTTP 401 the token was revoked', 'u: aborted']);
  });
});

describe('a pull waiting its turn when the agent stops', () => {
  it('asks nothing of the engine once stopped: the storage it reads may be closed by then', async () => {
    let release = () => {};
    let calls = 0;
    const pulls = new DownlinkPulls({
      engine: {
        pullOnce: () => {
          calls++;
          if (calls > 1) throw new Error('The database connection is not open');
          return new Promise<PullOutcome>((resolve) => {
            release = () => resolve(nothing);
          });
        },
      },
      intervalMs: 30_000,
      holdS: 900,
      setTimer: () => () => {},
      now: () => 0,
    });
    const first = pulls.pull(true);
    const second = pulls.pull(true);
    // the first pull is under way (its turn came), the second waits behind it
    for (let i = 0; i < 10 && calls === 0; i++) await Promise.resolve();
    expect(calls).toBe(1);
    pulls.stop();
    release();
    expect(await first).toBe(nothing);
    expect(await second).toMatchObject({ upstream: null, errors: [] });
    expect(calls).toBe(1);
  });
});
