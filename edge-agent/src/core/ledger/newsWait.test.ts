import { describe, expect, it } from 'vitest';
import { NEWS_HOLD_DEFAULT_S, newsWaitMs } from './newsWait.js';

const SIX_HOURS = 6 * 3600;
const hold = NEWS_HOLD_DEFAULT_S * 1000;

describe('newsWaitMs (docs/decisions/485-news-waits-for-its-round.md)', () => {
  it("lets a scheduled round's changed plan wait min(600 s, a tenth of the cell's cadence)", () => {
    expect(NEWS_HOLD_DEFAULT_S).toBe(600);
    expect(newsWaitMs({ status: 'changes', scheduledEveryS: SIX_HOURS, first: false }, hold)).toBe(600_000);
    // hourly: a tenth is 6 minutes
    expect(newsWaitMs({ status: 'changes', scheduledEveryS: 3600, first: false }, hold)).toBe(360_000);
    // every minute (a time-compressed scenario): 6 s
    expect(newsWaitMs({ status: 'clean', scheduledEveryS: 60, first: false }, hold)).toBe(6_000);
  });

  it('takes sync.newsHoldS as the longest wait; 0 turns the wait off', () => {
    expect(newsWaitMs({ status: 'changes', scheduledEveryS: SIX_HOURS, first: false }, 120_000)).toBe(
      120_000,
    );
    // the cadence caps an operator's longer hold too: news never waits into the next round
    expect(newsWaitMs({ status: 'changes', scheduledEveryS: 3600, first: false }, 3_600_000)).toBe(360_000);
    expect(newsWaitMs({ status: 'changes', scheduledEveryS: SIX_HOURS, first: false }, 0)).toBe(0);
  });

  it('never holds a failure, a first result, or a plan no schedule ran (start-up, a request, manual, source, apply)', () => {
    for (const status of ['failed', 'locked', 'redaction-failed'] as const)
      expect(newsWaitMs({ status, scheduledEveryS: SIX_HOURS, first: false }, hold)).toBe(0);
    expect(newsWaitMs({ status: 'changes', scheduledEveryS: SIX_HOURS, first: true }, hold)).toBe(0);
    expect(newsWaitMs({ status: 'changes', first: false }, hold)).toBe(0);
    expect(newsWaitMs({ status: 'changes', scheduledEveryS: 0, first: false }, hold)).toBe(0);
  });
});
