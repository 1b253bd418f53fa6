import type { PullOutcome, SyncEngine } from './SyncEngine.js';

/** How long an upstream that can hold a pull open is asked to hold one, seconds. */
export const DEFAULT_HOLD_S = 25;
/** Least time between two held pulls that came back empty at once (an upstream that does not hold). */
const MIN_REPULL_MS = 250;
/** Most pulls one `whileBusy` or `standing` run makes (bounded even if nothing else ends it). */
const MAX_PULLS = 1_000_000;
/** A held pull that failed at least this long after it was sent may have been cut by the path, ms. */
const MIN_CUT_MS = 20_000;
/** Two cuts whose lengths differ by at most this share are one idle timeout on the path. */
const SAME_CUT = 0.1;
/** Least hold asked after cuts, seconds. */
const MIN_HOLD_S = 15;

export interface DownlinkPullsDeps {
  engine: Pick<SyncEngine, 'pullOnce'>;
  /** Rest between pulls when the upstream cannot hold one open, ms (the sync interval). */
  intervalMs: number;
  /** Hold asked of the upstream, seconds; 0 never asks. */
  holdS: number;
  setTimer(ms: number, fn: () => void): () => void;
  now(): number;
  /**
   * Held pulls were cut twice after about `cutMs` (a proxy's idle timeout shorter than the hold): from now
   * on the agent asks `holdS` (docs/decisions/320-bytes-on-a-costly-link.md).
   */
  onHoldCut?(cutMs: number, holdS: number): void;
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
  /** Longest hold asked, seconds, once cuts showed what the path allows. */
  private capS = Number.POSITIVE_INFINITY;
  /** How long the last held pull that was cut had been open, ms; null when none was or a later one held longer. */
  private lastCutMs: number | null = null;

  constructor(private readonly deps: DownlinkPullsDeps) {}

  /**
   * One pull, after any pull in progress (never two at once on one cursor); held when `hold`. With
   * holding on (`holdS` > 0) every pull asks (`wait=0` when not held), so the agent learns whether its
   * upstream holds pulls from its first contact.
   */
  pull(hold = false): Promise<PullOutcome> {
    const on = this.deps.holdS > 0;
    const waitS = hold && on ? Math.min(this.deps.holdS, this.capS) : 0;
    let t0 = 0;
    const next = this.chain.then(() => {
      t0 = this.deps.now();
      return this.deps.engine.pullOnce(on ? { waitS, signal: this.abort.signal } : undefined);
    });
    this.chain = next.catch(() => {});
    return next.then((o) => {
      if (o.upstream !== null && o.errors.length === 0) this.holds = o.held === true;
      if (waitS > 0) this.noteCut(o, this.deps.now() - t0);
      return o;
    });
  }

  /**
   * A held pull that failed after `tookMs` may have been cut by an idle timeout on the path (a proxy):
   * two cuts of about the same length lower the hold asked to 0.8 of it. One cut alone (a link that went
   * down) changes nothing, and a held pull that outlasts the last cut forgets it.
   */
  private noteCut(o: PullOutcome, tookMs: number): void {
    if (this.stopped) return;
    if (o.upstream !== null) {
      if (this.lastCutMs !== null && tookMs > this.lastCutMs * (1 + SAME_CUT)) this.lastCutMs = null;
      return;
    }
    if (o.errors.length === 0 || tookMs < MIN_CUT_MS) return;
    const last = this.lastCutMs;
    this.lastCutMs = tookMs;
    if (last === null || Math.abs(tookMs - last) > last * SAME_CUT) return;
    const capS = Math.max(MIN_HOLD_S, Math.floor((Math.min(tookMs, last) / 1000) * 0.8));
    if (capS >= this.capS) return;
    this.capS = capS;
    this.deps.onHoldCut?.(Math.min(tookMs, last), capS);
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
