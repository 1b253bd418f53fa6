import type { Logger as PinoLogger } from 'pino';
import { scheduleCells } from '../adapters/cron/cronCells.js';
import type { AgentConfig } from '../config.js';
import type { AgentLedger } from '../core/ledger/AgentLedger.js';
import { RecordBatcher } from '../core/record/RecordBatcher.js';
import { type CellRef, CellScheduler, type TriggerReason } from '../core/schedule/CellScheduler.js';

/** The scheduler that runs cells `maxParallelRuns` at a time and the batcher that commits their results together. */
export function agentRuns(
  config: AgentConfig,
  deps: {
    store: AgentLedger;
    runCell(cell: CellRef, reason: TriggerReason): Promise<void>;
    setTimer(ms: number, fn: () => void): () => void;
    log: PinoLogger;
    /** Backoff and schedule jitter (default `Math.random`; a world's seed in simulation). */
    random?: () => number;
  },
): { scheduler: CellScheduler; batcher: RecordBatcher } {
  const { store, log } = deps;
  const batcher: RecordBatcher = new RecordBatcher({
    recordMany: (inputs, opts) => store.recordMany(inputs, opts),
    setTimer: deps.setTimer,
    windowMs: config.sync.recordWindowS * 1000,
    // A cron tick of every cell fits in one commit; more waits for the next.
    maxBatch: 256,
    // A plan still running (not just waiting for this commit), queued or waiting out its jitter may
    // finish soon (the ledger holds a round's results out of its document until the next push: decision 370).
    moreComing: (): boolean =>
      scheduler.queued > 0 || scheduler.delayed > 0 || scheduler.busy > batcher.waiting,
  });
  const scheduler = new CellScheduler({
    maxParallel: config.sync.maxParallelRuns,
    random: deps.random ?? Math.random,
    setTimer: deps.setTimer,
    onError: (cell, e) => log.error({ ...cell, err: (e as Error).message }, 'plan run failed unexpectedly'),
    runCell: deps.runCell,
  });
  return { scheduler, batcher };
}

/**
 * Starts the cron schedules (each firing jittered by `jitterS`) and, with `planOnStart`, plans every
 * cell now: a new agent shows its first results within a minute rather than at the next cron firing;
 * the scheduler runs them `maxParallelRuns` at a time, like any other firing. They are `start` runs, not
 * a cron round: their news never waits for the round (docs/decisions/485-news-waits-for-its-round.md).
 * Returns a stop function.
 */
export function startSchedules(config: AgentConfig, scheduler: CellScheduler): () => void {
  const stopCron = scheduleCells(config, (cell) =>
    scheduler.trigger(cell, 'schedule', config.sync.jitterS * 1000),
  );
  if (config.sync.planOnStart)
    for (const c of config.components)
      for (const e of c.environments) scheduler.trigger({ component: c.name, environment: e.name }, 'start');
  return stopCron;
}
