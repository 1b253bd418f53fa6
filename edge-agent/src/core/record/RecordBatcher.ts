import type { RecordRunInput, RecordRunResult } from '../../ports/Ledger.js';

/**
 * Group commit for plan results. Results that finish close together (a cron tick starts every cell at
 * once) share one store transaction, so one fsync and one document change, instead of one each. A
 * result's promise settles only after the commit that holds it: nothing may say a result is recorded
 * before it is durable. Timers are a port, as in CellScheduler.
 */
export interface RecordBatcherDeps {
  /**
   * Records the batch atomically (AgentLedger.recordMany). `moreComing`: other results will follow (the
   * ledger may hold the batch out of its document until the next push or the round's last result:
   * docs/decisions/370-one-change-per-push.md).
   */
  recordMany(inputs: RecordRunInput[], opts: { moreComing: boolean }): RecordRunResult[];
  /** Runs `fn` after `ms`; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
  /** Longest a finished result waits for others to share its commit. */
  windowMs: number;
  /** A batch this large is committed at once. */
  maxBatch: number;
  /**
   * Whether another result may join soon (a plan still running or queued). When none may, a result is
   * committed at once instead of waiting out the window. Default: always wait.
   */
  moreComing?(): boolean;
}

interface Waiting {
  input: RecordRunInput;
  resolve(r: RecordRunResult): void;
  reject(e: unknown): void;
}

export class RecordBatcher {
  private queue: Waiting[] = [];
  private cancel: (() => void) | null = null;

  constructor(private readonly deps: RecordBatcherDeps) {}

  /** Queues a result; resolves once it is committed, rejects if it could not be. */
  record(input: RecordRunInput): Promise<RecordRunResult> {
    const p = new Promise<RecordRunResult>((resolve, reject) => this.queue.push({ input, resolve, reject }));
    if (this.queue.length >= this.deps.maxBatch || this.deps.moreComing?.() === false) this.flush();
    else
      this.cancel ??= this.deps.setTimer(this.deps.windowMs, () => {
        this.cancel = null;
        this.flush();
      });
    return p;
  }

  /** Results waiting for their commit. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Commits what is waiting now (when nothing else will finish soon, and on stop). */
  flush(): void {
    this.cancel?.();
    this.cancel = null;
    const batch = this.queue;
    // Asked while the batch still counts as waiting: a plan busy beyond it may still finish.
    const opts = { moreComing: batch.length > 0 && this.deps.moreComing?.() === true };
    this.queue = [];
    if (batch.length === 0) return;
    let results: RecordRunResult[];
    try {
      results = this.deps.recordMany(
        batch.map((w) => w.input),
        opts,
      );
    } catch (e) {
      if (batch.length === 1) {
        batch[0]?.reject(e);
        return;
      }
      // One bad result must not cost the others theirs: record them one by one.
      for (const w of batch) {
        try {
          w.resolve(this.deps.recordMany([w.input], opts)[0] as RecordRunResult);
        } catch (e1) {
          w.reject(e1);
        }
      }
      return;
    }
    for (const [i, w] of batch.entries()) w.resolve(results[i] as RecordRunResult);
  }
}
