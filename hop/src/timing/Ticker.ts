/** Arms a timer; answers a function that cancels it. It must call `fn` later, never synchronously. */
export type SetTimer = (ms: number, fn: () => void) => () => void;

/** `setTimeout` as a {@link SetTimer}. */
export const systemTimer: SetTimer = (ms, fn) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

export interface TickerOptions {
  /**
   * One round of work. Answers the wait before the next round, ms; 0 asks for the next one at once
   * (still through the timer, so stopping and other work get their turn).
   */
  step(): Promise<number>;
  /** The wait after `maxBurst` rounds in a row answered 0, ms, and after a failed round by default. */
  restMs: number;
  /** Rounds in a row that may answer 0 before the ticker rests (default 10 000): a step that always has more cannot spin. */
  maxBurst?: number;
  /** Sees a round that threw (log it); answers the wait before the next round (default `restMs`). */
  onError?(err: unknown): number | undefined;
  /** Default `setTimeout`; tests pass their own. */
  setTimer?: SetTimer;
}

/**
 * Kick-and-timer loop: one round at a time, the next after the wait the round answered, or sooner when
 * kicked. `kick()` while waiting runs a round now; while a round runs, it runs another right after it.
 * `stop()` cancels the timer and waits for the round in progress. Every loop of the relay and the agent
 * that "works, then waits or is woken" is one of these.
 *
 * ```ts
 * const t = new Ticker({ step: async () => ((await moveOne()) ? 0 : 60_000), restMs: 60_000 });
 * t.start();
 * onNewWork(() => t.kick());
 * await t.stop();
 * ```
 */
export class Ticker {
  private cancel: (() => void) | null = null;
  private round: Promise<void> | null = null;
  private again = false;
  private burst = 0;
  private started = false;
  private stopped = false;

  constructor(private readonly opts: TickerOptions) {}

  /** Arms the first round after `delayMs` (default at once). */
  start(delayMs = 0): void {
    if (this.stopped) return;
    this.started = true;
    this.arm(delayMs);
  }

  /** Asks for a round soon. Nothing before `start` or after `stop`. */
  kick(): void {
    if (!this.started || this.stopped) return;
    if (this.round) this.again = true;
    else this.arm(0);
  }

  /** A round is running. */
  get busy(): boolean {
    return this.round !== null;
  }

  /** No more rounds; resolves when the round in progress (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    this.cancel = null;
    await this.round;
  }

  private arm(ms: number): void {
    this.cancel?.();
    this.cancel = (this.opts.setTimer ?? systemTimer)(Math.max(0, ms), () => {
      this.cancel = null;
      if (this.stopped || this.round) return;
      this.round = this.run();
    });
  }

  private async run(): Promise<void> {
    this.again = false;
    let wait: number;
    try {
      wait = await this.opts.step();
    } catch (err) {
      wait = this.opts.onError?.(err) ?? this.opts.restMs;
    }
    if (this.again) wait = 0;
    this.burst = wait <= 0 ? this.burst + 1 : 0;
    if (this.burst >= (this.opts.maxBurst ?? 10_000)) {
      this.burst = 0;
      wait = this.opts.restMs;
    }
    this.round = null;
    if (!this.stopped) this.arm(wait);
  }
}
