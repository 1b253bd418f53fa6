import { describe, expect, it } from 'vitest';
import { DownlinkPulls } from './DownlinkPulls.js';
import type { PullOutcome } from './SyncEngine.js';

/**
 * Held pulls against a fake relay through the engine port, on a fake clock
 * (docs/decisions/340-no-gap-between-held-pulls.md): the relay keeps up to `keep` held pulls of the agent,
 * wakes the one ending first when downlink arrives, lets the one ending first go (empty) for a third, and
 * holds a pull that would find only what its last answer carried, as hop's held pulls do; requests and
 * answers take `oneWayMs` each way.
 */
interface Pull {
  cursor: number;
  arrivedAt: number;
  leftAt: number | null;
  endsAt: number;
  answer(bundles: number): void;
}

function site(opts: { oneWayMs: number; holdS: number; keep: number; lanes?: number }) {
  let now = 0;
  let order = 0;
  const events: Array<{ at: number; order: number; fn: () => void }> = [];
  const at = (ms: number, fn: () => void) => {
    const e = { at: now + ms, order: order++, fn };
    events.push(e);
    return () => {
      const i = events.indexOf(e);
      if (i >= 0) events.splice(i, 1);
    };
  };
  let downlink = 0; // bundles that reached the relay for the site
  const arrivedAt: number[] = []; // when each reached the relay
  const receivedAt: number[] = []; // when each first reached the agent
  let cursor = 0; // the agent's
  let answeredUpTo = 0; // the relay's: what its last answer with bundles carried
  const pulls: Pull[] = [];
  const waiting = () => pulls.filter((p) => p.leftAt === null && p.arrivedAt <= now);
  let requests = 0;
  /** Cuts every pull in flight or held (the link goes down). */
  const cutters = new Set<() => void>();
  const warned: number[] = [];

  const engine = {
    pullOnce: (hold?: { waitS: number; signal?: AbortSignal }): Promise<PullOutcome> =>
      new Promise((resolve) => {
        requests++;
        const sent = cursor;
        const waitS = Math.min(hold?.waitS ?? 0, opts.holdS);
        const outcome = (bundles: number): PullOutcome => ({
          upstream: 'relay',
          acks: 0,
          planRequests: bundles,
          approvals: 0,
          refused: 0,
          rejections: 0,
          resumed: false,
          errors: [],
          held: true,
          heldS: waitS,
          keep: opts.keep,
          holdMaxS: opts.holdS,
        });
        hold?.signal?.addEventListener('abort', () =>
          resolve({ ...outcome(0), upstream: null, errors: ['relay: aborted'] }),
        );
        const cut = () => resolve({ ...outcome(0), upstream: null, errors: ['relay: socket hang up'] });
        cutters.add(cut);
        at(opts.oneWayMs, () => {
          // at the relay
          let cancel = () => {};
          const p: Pull = {
            cursor: sent,
            arrivedAt: now,
            leftAt: null,
            endsAt: now + waitS * 1000,
            answer: (found) => {
              cancel();
              p.leftAt = now;
              // only what the last answer carried: empty
              const bundles = opts.keep >= 2 && sent + found <= answeredUpTo ? 0 : found;
              const upTo = sent + bundles;
              if (bundles > 0) answeredUpTo = Math.max(answeredUpTo, upTo);
              at(opts.oneWayMs, () => {
                for (let i = cursor; i < upTo; i++) receivedAt[i] ??= now;
                const fresh = Math.max(0, upTo - cursor);
                cursor = Math.max(cursor, upTo);
                cutters.delete(cut);
                resolve(outcome(fresh));
              });
            },
          };
          pulls.push(p);
          const fresh = downlink > (opts.keep >= 2 ? Math.max(sent, answeredUpTo) : sent);
          if (fresh || waitS === 0) return p.answer(downlink - sent);
          const same = waiting()
            .filter((w) => w !== p)
            .sort((a, b) => a.endsAt - b.endsAt);
          for (const w of same.slice(0, Math.max(0, same.length - opts.keep + 1))) w.answer(0);
          cancel = at(waitS * 1000, () => p.answer(downlink - p.cursor));
        });
      }),
  };

  const pulls_ = new DownlinkPulls({
    engine,
    intervalMs: 30_000,
    holdS: 3600,
    ...(opts.lanes ? { lanes: opts.lanes } : {}),
    setTimer: (ms, fn) => at(ms, fn),
    now: () => now,
    onHoldCut: (cutMs) => warned.push(cutMs),
  });

  return {
    pulls: pulls_,
    get now() {
      return now;
    },
    get requests() {
      return requests;
    },
    /** Downlink reaches the relay `ms` from now: the held pull ending first answers. */
    arriveIn(ms: number) {
      at(ms, () => {
        arrivedAt[downlink] = now;
        downlink++;
        const first = waiting().sort((a, b) => a.endsAt - b.endsAt)[0];
        first?.answer(downlink - first.cursor);
      });
    },
    async runUntil(t: number) {
      for (let n = 0; n < 1_000_000; n++) {
        await new Promise((r) => setImmediate(r));
        events.sort((a, b) => a.at - b.at || a.order - b.order);
        const e = events[0];
        if (!e || e.at > t) break;
        events.shift();
        now = e.at;
        e.fn();
      }
      now = t;
    },
    /** Spans of time after `from` with no pull waiting at the relay, ms. */
    gaps(from: number, to: number): Array<[number, number]> {
      const spans = pulls
        .map((p) => [p.arrivedAt, p.leftAt ?? to] as [number, number])
        .sort((a, b) => a[0] - b[0]);
      const out: Array<[number, number]> = [];
      let covered = from;
      for (const [a, b] of spans) {
        if (b <= covered) continue;
        if (a > covered) out.push([covered, Math.min(a, to)]);
        covered = Math.max(covered, b);
      }
      if (covered < to) out.push([covered, to]);
      return out.filter(([a, b]) => b > a && a < to);
    },
    mostWaiting(): number {
      const times = pulls.flatMap((p) => [p.arrivedAt, p.leftAt ?? Number.POSITIVE_INFINITY]);
      return Math.max(
        ...times.map(
          (t) => pulls.filter((p) => p.arrivedAt <= t && (p.leftAt === null || p.leftAt > t)).length,
        ),
      );
    },
    warned,
    /** The link goes down `ms` from now: every pull open is cut then. */
    cutIn(ms: number) {
      at(ms, () => {
        for (const c of [...cutters]) c();
        cutters.clear();
      });
    },
    latencies: () => arrivedAt.map((a, i) => (receivedAt[i] ?? Number.POSITIVE_INFINITY) - a),
    firstArrival: () => Math.min(...pulls.filter((p) => p.endsAt > p.arrivedAt).map((p) => p.arrivedAt)),
  };
}

async function standingFor(s: ReturnType<typeof site>, ms: number, downlinkAt: number[]) {
  const first = s.pulls.pull(); // the cycle's pull: learns that the relay holds, and a round trip
  await s.runUntil(s.now + 60 * 60_000);
  await first;
  const start = s.now;
  for (const t of downlinkAt) s.arriveIn(t);
  const run = s.pulls.standing(
    () => true,
    () => {},
  );
  await s.runUntil(start + ms);
  s.pulls.stop();
  await s.runUntil(s.now + 1);
  await run;
  return start;
}

describe('DownlinkPulls against a relay that keeps two held pulls', () => {
  it('has a pull waiting at the relay at every instant, and downlink reaches the agent one light time after the relay', async () => {
    const oneWayMs = 12_000;
    const s = site({ oneWayMs, holdS: 55, keep: 2 });
    // Downlink right after an answer reached the agent (the worst moment with one pull), at a hold's end,
    // and at other moments.
    const downlinkAt = [100_000, 100_000 + 2 * oneWayMs + 1, 300_000, 55_000 + oneWayMs, 611_000];
    const start = await standingFor(s, 1_000_000, downlinkAt);
    expect(s.gaps(s.firstArrival(), start + 1_000_000)).toEqual([]);
    for (const ms of s.latencies()) expect(ms).toBe(oneWayMs);
    expect(s.mostWaiting()).toBeLessThanOrEqual(2);
    // about two requests per hold (two lanes), not more: 1,000 s of 55 s holds
    expect(s.requests).toBeLessThan(2 * (1_000 / (55 - 24)) + 10);
  });

  it('closes the gaps where the hold is shorter than a round trip (Mars: 12 min one way, 15 min holds)', async () => {
    const oneWayMs = 720_000;
    const s = site({ oneWayMs, holdS: 900, keep: 2 });
    const downlinkAt = [3_000_000, 3_000_000 + 2 * oneWayMs + 1, 9_000_000];
    const start = await standingFor(s, 20_000_000, downlinkAt);
    expect(s.gaps(s.firstArrival(), start + 20_000_000)).toEqual([]);
    for (const ms of s.latencies()) expect(ms).toBe(oneWayMs);
    expect(s.mostWaiting()).toBeLessThanOrEqual(2);
  });

  it('delivers a burst (downlink twice within a light time) one light time after each reached the relay', async () => {
    // The second wakes the other held pull: none waits then until the agent's next ones get there.
    for (const oneWayMs of [12_000, 720_000]) {
      const s = site({ oneWayMs, holdS: oneWayMs === 12_000 ? 55 : 900, keep: 2 });
      await standingFor(s, 100 * oneWayMs, [10 * oneWayMs, 10 * oneWayMs + 500, 50 * oneWayMs]);
      expect(s.latencies()).toEqual([oneWayMs, oneWayMs, oneWayMs]);
    }
  });

  it('keeps one held pull at a relay that keeps one per agent: one request per hold', async () => {
    const s = site({ oneWayMs: 12_000, holdS: 55, keep: 1 });
    await standingFor(s, 1_000_000, []);
    expect(s.mostWaiting()).toBe(1);
    // each sent a round trip (24 s, at most a quarter of the hold) before the last one's hold ends
    expect(s.requests).toBeLessThan(1_000 / (55 - 55 / 4) + 3);
  });

  it('takes both lanes cut at once (the link went down) for one cut, not two of the same length', async () => {
    const s = site({ oneWayMs: 1_000, holdS: 900, keep: 2 });
    s.cutIn(3_600_000 + 300_000); // 300 s into both lanes' first held pulls, opened together
    await standingFor(s, 400_000, []);
    expect(s.warned).toEqual([]);
  });

  it('keeps one lane where told to (`sync.heldPulls: 1`), even at a relay that keeps two', async () => {
    const s = site({ oneWayMs: 12_000, holdS: 55, keep: 2, lanes: 1 });
    await standingFor(s, 1_000_000, [100_000]);
    expect(s.requests).toBeLessThan(1_000 / (55 - 55 / 4) + 4);
    expect(s.latencies()).toHaveLength(1);
  });
});
