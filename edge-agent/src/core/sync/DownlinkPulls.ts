import type { PullOutcome } from './SyncEngine.js';

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
/** Held pulls that failed within this of each other failed together (one event), ms. */
const SAME_EVENT_MS = 2_000;
/** What a pull asked after `stop` answers: nothing pulled, no upstream (a `whileBusy` or `standing` run ends). */
const STOPPED: PullOutcome = {
  upstream: null,
  acks: 0,
  planRequests: 0,
  approvals: 0,
  refused: 0,
  rejections: 0,
  resumed: false,
  errors: [],
};
/** Least time a held pull's successor goes before its hold ends, ms. */
const MIN_LEAD_MS = 1_000;

export interface DownlinkPullsDeps {
  /** The pulls of this lane: one upstream's downlink, or every upstream's (decision 410). */
  engine: { pullOnce(hold?: { waitS: number; signal?: AbortSignal }): Promise<PullOutcome> };
  /** Rest between pulls when the upstream cannot hold one open, ms (the sync interval). */
  intervalMs: number;
  /** Hold asked of the upstream, seconds; 0 never asks. */
  holdS: number;
  /** Held pulls kept open at once where the upstream keeps two (decision 340); default 2. */
  lanes?: number;
  setTimer(ms: number, fn: () => void): () => void;
  now(): number;
  /**
   * Held pulls were cut twice after about `cutMs` (a proxy's idle timeout shorter than the hold): from now
   * on the agent asks `holdS` (docs/decisions/320-bytes-on-a-costly-link.md).
   */
  onHoldCut?(cutMs: number, holdS: number): void;
}

/**
 * The agent's downlink pulls, so control traffic (approvals, plan requests, publications) never waits
 * behind uploads (docs/decisions/270-control-first.md): `whileBusy` keeps pulling beside a long upload
 * where the upstream does not hold pulls (one at a time), and `standing` keeps held pulls open where it
 * does, two at a relay that keeps two (docs/decisions/340-no-gap-between-held-pulls.md), so what reaches
 * the relay reaches a connected agent one one-way light time later, always.
 */
export class DownlinkPulls {
  private chain: Promise<unknown> = Promise.resolve();
  /** The upstream held the last pull open: it answers `wait`. */
  holds = false;
  /** Held pulls the upstream keeps at once for this agent (decision 340); 1: an older one. */
  private keep = 1;
  /** Seconds the upstream last said it held a pull that asked to wait; null: not known yet. */
  private heldS: number | null = null;
  /** Shortest pull measured (a round trip and the upstream's own time), ms. */
  private rttMs = Number.POSITIVE_INFINITY;
  /** When the last held pull that failed ended, ms. */
  private lastCutAt = Number.NEGATIVE_INFINITY;
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
    const next = this.chain.then(() => this.once(hold));
    this.chain = next.catch(() => {});
    return next;
  }

  /**
   * One pull now, beside any other (only `standing` runs two at once, each its own held pull); `cut` ends
   * it early as `stop` does (a standing run that ended).
   */
  private async once(hold: boolean, cut?: AbortSignal): Promise<PullOutcome> {
    // stopped while it waited its turn behind another pull: the agent's storage may be closed by now
    if (this.stopped) return STOPPED;
    const on = this.deps.holdS > 0;
    const waitS = hold && on ? Math.min(this.deps.holdS, this.capS) : 0;
    const t0 = this.deps.now();
    const signal = cut ? AbortSignal.any([this.abort.signal, cut]) : this.abort.signal;
    const o = await this.deps.engine.pullOnce(on ? { waitS, signal } : undefined);
    const took = this.deps.now() - t0;
    if (o.upstream !== null && o.errors.length === 0) {
      this.holds = o.held === true;
      this.keep = o.held ? (o.keep ?? 1) : 1;
      // The hold of the next held pull: what the last one got, or before any, the longest stated.
      if (o.held && waitS > 0 && o.heldS !== undefined) this.heldS = o.heldS;
      else if (o.held && this.heldS === null && o.holdMaxS !== undefined) this.heldS = o.holdMaxS;
      this.rttMs = Math.min(this.rttMs, took);
    }
    // a stalled answer was cut by the agent itself (decision 410), not by an idle timeout on the path
    if (waitS > 0 && !o.stalled?.length) this.noteCut(o, took, t0 + took);
    return o;
  }

  /**
   * A held pull that failed after `tookMs` may have been cut by an idle timeout on the path (a proxy):
   * two cuts of about the same length lower the hold asked to 0.8 of it. One cut alone (a link that went
   * down) changes nothing, and a held pull that outlasts the last cut forgets it.
   */
  private noteCut(o: PullOutcome, tookMs: number, at: number): void {
    if (this.stopped) return;
    if (o.upstream !== null) {
      if (this.lastCutMs !== null && tookMs > this.lastCutMs * (1 + SAME_CUT)) this.lastCutMs = null;
      return;
    }
    if (o.errors.length === 0 || tookMs < MIN_CUT_MS) return;
    // Two held pulls open at once, cut together, are one event (a link that went down), not two.
    const together = at - this.lastCutAt < SAME_EVENT_MS;
    this.lastCutAt = at;
    if (together) return;
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
   * Keeps held pulls open while the upstream holds them and `up()` says the link works; ends (answers
   * the pulls made) when either stops being so, or at `stop`. The caller's cycle pulls again then.
   * Where the upstream keeps two held pulls of this agent (`keep`), two lanes run, so one still waits
   * there while the answer to the other travels down; each lane sends its next pull a round trip before
   * its current one's hold ends, so none waits for the next at a hold's end either
   * (docs/decisions/340-no-gap-between-held-pulls.md).
   */
  async standing(up: () => boolean, onOutcome: (o: PullOutcome) => void): Promise<number> {
    // A lane whose pull failed ends the run and cuts the other lane's held pull: the cycle then pulls again
    // at once (after a failure, unheld), so a link that works again (a rotated token, an upstream back) is
    // seen now, not when that held pull's hold ends, hours later perhaps.
    const run = { pulls: 0, ended: false, cut: new AbortController() };
    const go = () => !this.stopped && !run.ended && this.holds && up() && run.pulls < MAX_PULLS;
    const lanes = Math.max(1, Math.min(this.keep, this.deps.lanes ?? 2, 2));
    await Promise.all(Array.from({ length: lanes }, () => this.lane(run, go, onOutcome)));
    return run.pulls;
  }

  /** One lane of `standing`: held pulls one after another, the next sent early where the hold is known. */
  private async lane(
    run: { pulls: number; ended: boolean; cut: AbortController },
    go: () => boolean,
    onOutcome: (o: PullOutcome) => void,
  ): Promise<void> {
    const landed = (o: PullOutcome) => {
      run.pulls++;
      onOutcome(o);
    };
    const early = new Set<Promise<void>>();
    while (go()) {
      const t0 = this.deps.now();
      const answer = this.once(true, run.cut.signal);
      const renewMs = this.renewAfterMs();
      let cancel = () => {};
      const renew =
        renewMs === null
          ? new Promise<null>(() => {})
          : new Promise<null>((resolve) => {
              cancel = this.deps.setTimer(renewMs, () => resolve(null));
            });
      const o = await Promise.race([answer, renew]);
      cancel();
      if (o === null) {
        // The next pull goes now; this one's answer (empty once the next reaches the upstream) still lands.
        const p: Promise<void> = answer.then(landed).finally(() => early.delete(p));
        early.add(p);
        continue;
      }
      landed(o);
      if (o.upstream === null) {
        run.ended = true;
        run.cut.abort();
        break;
      }
      if (this.deps.now() - t0 < MIN_REPULL_MS && !this.hadAny(o)) await this.sleep(MIN_REPULL_MS);
    }
    await Promise.all([...early]);
  }

  /**
   * When a held pull's successor goes, ms after it was sent: a round trip (the shortest pull measured,
   * at least 1 s, at most a quarter of the hold) before its hold ends; null while the hold is unknown.
   */
  private renewAfterMs(): number | null {
    if (this.heldS === null || this.heldS <= 0) return null;
    const holdMs = Math.min(this.heldS, this.deps.holdS, this.capS) * 1000;
    const lead = Math.min(Math.max(this.rttMs, MIN_LEAD_MS), holdMs / 4);
    return holdMs - lead;
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
