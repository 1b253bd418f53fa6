import type { PullOutcome, SyncEngine } from './SyncEngine.js';

/** How long an upstream that can hold a pull open is asked to hold one, seconds. */
export const DEFAULT_HOLD_S = 25;
/** Least time between two held pulls that came back empty at once (an upstream that does not hold). */
const MIN_REPULL_MS = 250;
/** Most pulls one `whileBusy` or `standing` run makes (bounded even if nothing else ends it). */
const MAX_PULLS = 1_000_000;

export interface DownlinkPullsDeps {
  engine: Pick<SyncEngine, 'pullOnce'>;
  /** Rest between pulls when the upstream cannot hold one open, ms (the sync interval). */
  intervalMs: number;
  /** Hold asked of the upstream, seconds; 0 never asks. */
  holdS: number;
  setTimer(ms: number, fn: () => void): () => void;
  now(): number;
}

/**
 * The agent's downlink pulls, one at a time, so control traffic (approvals, plan requests, publications)
 * never waits behind uploads (docs/decisions/270-control-first.md): `whileBusy` keeps pulling beside a
 * long upload, and `standing` keeps one held pull open while the agent is otherwise idle, so what
 * reaches the relay reaches a connected agent one one-way light time later.
 */
export class DownlinkPulls {
  private chain: Promise<unknown> = Promise.resolve();
  /** The upstream held the last pull open: it answers `wait`. */
  holds = false;
  private readonly abort = new AbortController();
  private stopped = false;

  constructor(private readonly deps: DownlinkPullsDeps) {}

  /**
   * One pull, after any pull in progress (never two at once on one cursor); held when `hold`. With
   * holding on (`holdS` > 0) every pull asks (`wait=0` when not held), so the agent learns whether its
   * upstream holds pulls from its first contact.
   */
  pull(hold = false): Promise<PullOutcome> {
    const on = this.deps.holdS > 0;
    const waitS = hold && on ? this.deps.holdS : 0;
    const next = this.chain.then(() =>
      this.deps.engine.pullOnce(on ? { waitS, signal: this.abort.signal } : undefined),
    );
    this.chain = next.catch(() => {});
    return next.then((o) => {
      if (o.upstream !== null && o.errors.length === 0) this.holds = o.held === true;
      return o;
    });
  }

  /**
   * Pulls until `work` settles: held pulls back to back where the upstream holds them, else one every
   * interval. Answers the pulls made. An unreachable upstream ends it (the cycle's push probes it).
   */
  async whileBusy(work: Promise<unknown>, onOutcome: (o: PullOutcome) => void): Promise<number> {
    let done = false;
    const settled = work.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    let pulls = 0;
    while (!done && !this.stopped && pulls < MAX_PULLS) {
      if (!this.holds) await Promise.race([settled, this.sleep(this.deps.intervalMs)]);
      if (done || this.stopped) break;
      const o = await this.heldPull(settled);
      pulls++;
      onOutcome(o);
      if (o.upstream === null) break;
    }
    return pulls;
  }

  /**
   * Keeps a held pull open while the upstream holds them and `up()` says the link works; ends (answers
   * the pulls made) when either stops being so, or at `stop`. The caller's cycle pulls again then.
   */
  async standing(up: () => boolean, onOutcome: (o: PullOutcome) => void): Promise<number> {
    let pulls = 0;
    while (!this.stopped && this.holds && up() && pulls < MAX_PULLS) {
      const o = await this.heldPull();
      pulls++;
      onOutcome(o);
      if (o.upstream === null) break;
    }
    return pulls;
  }

  /** A held pull; one that came back empty at once waits a moment, so a non-holding upstream is not hammered. */
  private async heldPull(cut?: Promise<void>): Promise<PullOutcome> {
    const t0 = this.deps.now();
    const o = await this.pull(true);
    if (this.deps.now() - t0 < MIN_REPULL_MS && !this.hadAny(o)) {
      const pause = this.sleep(MIN_REPULL_MS);
      await (cut ? Promise.race([cut, pause]) : pause);
    }
    return o;
  }

  private hadAny(o: PullOutcome): boolean {
    return o.acks + o.planRequests + o.approvals + o.refused + o.rejections > 0;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.abort.signal;
      if (signal.aborted) return resolve();
      const onAbort = () => {
        cancel();
        resolve();
      };
      const cancel = this.deps.setTimer(ms, () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Ends held pulls and waits at once. */
  stop(): void {
    this.stopped = true;
    this.abort.abort();
  }
}
