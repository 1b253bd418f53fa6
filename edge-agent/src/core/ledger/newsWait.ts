import { isFailureStatus } from '@driftline/protocol';

/**
 * How long a changed plan may wait for its round (docs/decisions/485-news-waits-for-its-round.md): the
 * news of a scheduled (cron) round goes up with the round's last result, at most `sync.newsHoldS` (600 s
 * by default) and never more than a tenth of the cell's cadence after it was recorded. Never waits: a
 * failure (what an operator must see), a cell's first result (start-up's "first results within a
 * minute"), and a plan no schedule ran: start-up's plans, a plan request's, a manual, source or apply run.
 */
export const NEWS_HOLD_DEFAULT_S = 600;

export interface NewsWaitInput {
  status: string;
  /** The cell's cadence, seconds, when a cron round ran the plan; absent otherwise. */
  scheduledEveryS?: number;
  /** The cell had no result before this one. */
  first: boolean;
}

/** Milliseconds this result's news may wait for its round; 0: it goes with the next push. */
export function newsWaitMs(run: NewsWaitInput, newsHoldMs: number): number {
  if (isFailureStatus(run.status) || run.first) return 0;
  const every = run.scheduledEveryS ?? 0;
  if (!(every > 0) || !(newsHoldMs > 0)) return 0;
  return Math.min(newsHoldMs, every * 100); // a tenth of the cadence, in ms
}

/**
 * Milliseconds a cron round's confirmation (an unchanged plan) may wait for the round's end at most: half
 * the cell's cadence (docs/decisions/370-one-change-per-push.md, change of 2026-11-30), below the ledger's
 * `holdConfirmationsMs` where that is shorter. A round whose plans outlast their cadence never ends: its
 * next firing is queued before its last result is recorded. Absent: no schedule ran the plan.
 */
export function confirmationWaitMs(scheduledEveryS: number | undefined): number | undefined {
  return scheduledEveryS && scheduledEveryS > 0 ? scheduledEveryS * 500 : undefined;
}
