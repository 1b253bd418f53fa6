import { describe, expect, it } from 'vitest';
import type { RecordRunInput } from '../src/ports/Ledger.js';
import { memoryLedger } from './agentStorageFixtures.js';
import { runId, summary } from './helpers/storeFixtures.js';

/**
 * The ledger's round under way, for a push's `ackLater` (docs/decisions/525-acks-wait-for-the-round.md):
 * from a batch recorded with more coming until the round's last batch, or until the longest a held result
 * of the round may wait has passed.
 */
const input = (i: number, scheduledEveryS?: number): RecordRunInput => ({
  runId: runId(),
  summary: summary({
    component: `c-${i}`,
    finishedAt: new Date(Date.UTC(2030, 0, 1) + i * 1000).toISOString(),
  }),
  ...(scheduledEveryS === undefined ? {} : { scheduledEveryS }),
});

describe('a round under way (decision 525)', () => {
  it('says more follows from a batch with more coming until the last, within the confirmation wait', () => {
    let now = Date.UTC(2030, 0, 1);
    const { ledger } = memoryLedger({ now: () => now });
    expect(ledger.ackLaterS()).toBeUndefined();
    ledger.recordMany([input(1, 6 * 3600)], { moreComing: true });
    expect(ledger.ackLaterS()).toBe(600); // ten minutes: a six-hourly round's confirmations wait that long
    ledger.recordMany([input(2, 6 * 3600)], { moreComing: true });
    expect(ledger.ackLaterS()).toBe(600);
    ledger.recordMany([input(3, 6 * 3600)]);
    expect(ledger.ackLaterS()).toBeUndefined(); // the round's last batch: its push is acked at once
    ledger.recordMany([input(4, 6 * 3600)], { moreComing: true });
    now += 600_000; // nothing more recorded in the whole wait: the round ended without a word
    expect(ledger.ackLaterS()).toBeUndefined();
  });

  it('asks no longer than half `sync.resendAfterS`: the agent never sends the round again while it waits', () => {
    const { ledger } = memoryLedger({ now: () => Date.UTC(2030, 0, 1), resendAfterMs: 120_000 });
    ledger.recordMany([input(1, 6 * 3600)], { moreComing: true });
    expect(ledger.ackLaterS()).toBe(60);
  });

  it('says a fast cadence’s half: a cell planned every minute asks 30 s', () => {
    const { ledger } = memoryLedger({ now: () => Date.UTC(2030, 0, 1) });
    ledger.recordMany([input(1, 6 * 3600), input(2, 60)], { moreComing: true });
    expect(ledger.ackLaterS()).toBe(30);
  });
});
