import { describe, expect, it } from 'vitest';
import type { RecordRunInput } from '../src/ports/Ledger.js';
import { ackFor, memoryLedger } from './agentStorageFixtures.js';
import {
  roundAt as at,
  roundComponent as comp,
  roundInput as input,
  runId,
  summary,
} from './helpers/storeFixtures.js';

/**
 * News waits for its round by default where that is safe (docs/decisions/485-news-waits-for-its-round.md):
 * a scheduled round's changed plan is held until the round's last result, at most min(600 s, a tenth of
 * the cell's cadence); a failure, a first result and a plan no schedule ran (start-up's, a request's)
 * go with the next push. Across a restart: `heldNewsRestart.test.ts`.
 */

const SIX_HOURS = 6 * 3600;

/** A ledger on a settable clock (default options: the agent's defaults) whose estate the hub holds. */
function estate(over: { holdNewsMs?: number } = {}) {
  const clock = { now: Date.UTC(2030, 0, 1, 6) };
  const { ledger } = memoryLedger({ now: () => clock.now, ...over });
  ledger.recordMany([input(0, 0), input(0, 1), input(0, 2)]);
  const d = ledger.pending()[0]!;
  ledger.applyAck({ ...ackFor(d.epoch, d.heads, []), readsConfirmed: true });
  return { ledger, clock };
}

describe('news waits for its round by default', () => {
  it("holds a six-hourly round's changed plan 600 s by default, then it goes with the next push", () => {
    const { ledger, clock } = estate();
    ledger.recordMany([input(1, 0, 'b', SIX_HOURS)], { moreComing: true });
    expect(ledger.pending()).toEqual([]);
    expect(ledger.status().held).toMatchObject({ runs: 1, dueBy: clock.now + 600_000 });
    clock.now += 599_999;
    expect(ledger.pending()).toEqual([]);
    clock.now += 1;
    expect(ledger.pending()).toHaveLength(1);
  });

  it("caps the wait at a tenth of the cell's cadence: an hourly cell's news waits 360 s", () => {
    const { ledger, clock } = estate();
    ledger.recordMany([input(1, 0, 'b', 3600)], { moreComing: true });
    clock.now += 359_999;
    expect(ledger.pending()).toEqual([]);
    clock.now += 1;
    expect(ledger.pending()).toHaveLength(1);
  });

  it("the round's last result writes its news at once, before the wait ends", () => {
    const { ledger } = estate();
    ledger.recordMany([input(1, 0, 'b', SIX_HOURS)], { moreComing: true });
    expect(ledger.pending()).toEqual([]);
    ledger.recordMany([input(1, 1, 'a', SIX_HOURS)]);
    expect(ledger.pending()).toHaveLength(1);
  });

  it('never holds a plan no schedule ran: start-up, a plan request, a manual run', () => {
    const { ledger } = estate();
    ledger.recordMany([input(1, 0, 'b')], { moreComing: true });
    expect(ledger.pending()).toHaveLength(1);
  });

  it("never holds a cell's first result, even in a scheduled round under way", () => {
    const { ledger } = estate();
    ledger.recordMany([input(1, 7, 'b', SIX_HOURS)], { moreComing: true });
    expect(ledger.pending()).toHaveLength(1);
  });

  it('never holds a failure, and what was held with it goes too', () => {
    const { ledger } = estate();
    ledger.recordMany([input(1, 0, 'b', SIX_HOURS)], { moreComing: true });
    expect(ledger.pending()).toEqual([]);
    const failed: RecordRunInput = {
      runId: runId(),
      summary: summary({ component: comp(1), finishedAt: at(1, 1), status: 'failed', reason: 'boom' }),
      scheduledEveryS: SIX_HOURS,
    };
    ledger.recordMany([failed], { moreComing: true });
    const d = ledger.pending();
    expect(d).toHaveLength(1);
    expect(d[0]?.hasFailure).toBe(true);
  });

  it('sync.newsHoldS 0 turns the wait off: news goes with the next push', () => {
    const { ledger } = estate({ holdNewsMs: 0 });
    ledger.recordMany([input(1, 0, 'b', SIX_HOURS)], { moreComing: true });
    expect(ledger.pending()).toHaveLength(1);
  });
});
