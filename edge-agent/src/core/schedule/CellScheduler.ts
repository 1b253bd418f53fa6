import { cellKey } from '@driftline/protocol';
/**
 * Decides when each cell (environment/component) runs: never two runs of one cell at once, at most
 * `maxParallel` runs in all, scheduled runs spread by random jitter, a trigger for a cell already
 * queued or running coalesced into it. Timers and randomness are ports; cron lives in an adapter.
 */
export interface CellRef {
  component: string;
  environment: string;
  /** A ref other than the component's default (its plans share the cell's state, so never run alongside). */
  ref?: string;
  /** A commit of that ref to plan. */
  commit?: string;
}

/**
 * `schedule`: a cron firing; `start`: `planOnStart`'s first plans (their news never waits for a round,
 * docs/decisions/485-news-waits-for-its-round.md); `source`: a git bundle brought a new commit of a ref
 * the component plans; `apply`: an approved plan waits.
 */
export type TriggerReason = 'schedule' | 'start' | 'request' | 'manual' | 'source' | 'apply';
export type TriggerResult = 'queued' | 'coalesced' | 'stopped';

export interface SchedulerDeps {
  maxParallel: number;
  runCell(cell: CellRef, reason: TriggerReason): Promise<void>;
  /** Runs `fn` after `ms`; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
  random(): number;
  onError(cell: CellRef, error: unknown): void;
}

/** Runs of one environment/component share its state: one at a time, whatever the ref. */
const key = (c: CellRef) => cellKey(c.environment, c.component);
/** Triggers coalesce per environment/component, ref and commit. */
const pendingKey = (c: CellRef) => `${key(c)}@${c.ref ?? ''}#${c.commit ?? ''}`;

export class CellScheduler {
  private readonly waiting: Array<{ cell: CellRef; reason: TriggerReason }> = [];
  private readonly pendingKeys = new Set<string>();
  private readonly runningKeys = new Set<string>();
  private readonly timers = new Set<() => void>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly deps: SchedulerDeps) {}

  /** Asks for a run of `cell`, after up to `jitterMs` of random delay. */
  trigger(cell: CellRef, reason: TriggerReason, jitterMs = 0): TriggerResult {
    if (this.stopped) return 'stopped';
    const k = pendingKey(cell);
    if (this.pendingKeys.has(k)) return 'coalesced';
    this.pendingKeys.add(k);
    const delay = Math.floor(this.deps.random() * jitterMs);
    if (delay <= 0) {
      this.enqueue(cell, reason);
    } else {
      const cancel = this.deps.setTimer(delay, () => {
        this.timers.delete(cancel);
        this.enqueue(cell, reason);
      });
      this.timers.add(cancel);
    }
    return 'queued';
  }

  private enqueue(cell: CellRef, reason: TriggerReason): void {
    if (this.stopped) return;
    this.waiting.push({ cell, reason });
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.running.size < this.deps.maxParallel) {
      const i = this.waiting.findIndex((w) => !this.runningKeys.has(key(w.cell)));
      if (i < 0) return;
      const [next] = this.waiting.splice(i, 1);
      if (!next) return;
      const k = key(next.cell);
      this.pendingKeys.delete(pendingKey(next.cell));
      this.runningKeys.add(k);
      const p: Promise<void> = this.deps
        .runCell(next.cell, next.reason)
        .catch((e) => this.deps.onError(next.cell, e))
        .finally(() => {
          this.runningKeys.delete(k);
          this.running.delete(p);
          this.pump();
        });
      this.running.add(p);
    }
  }

  get busy(): number {
    return this.running.size;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Triggers still waiting out their jitter (a cron round's cells not started yet). */
  get delayed(): number {
    return this.timers.size;
  }

  /** Stops starting runs (queued ones are dropped, timers cancelled) and waits for those running. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    this.waiting.length = 0;
    this.pendingKeys.clear();
    await Promise.all([...this.running]);
  }
}
