import { backoffDelay, Ticker } from '@driftline/hop/timing';
import type { Logger } from '../../ports/Logger.js';
import { DownlinkPulls } from './DownlinkPulls.js';
import type { PullOutcome, PushOutcome, Refusal, SyncEngine } from './SyncEngine.js';

export interface SyncLoopDeps {
  engine: Pick<SyncEngine, 'pushOnce' | 'pullOnce' | 'uploadBlobsOnce'> &
    Partial<Pick<SyncEngine, 'abortExchanges'>>;
  /** Time between cycles while the link works. */
  intervalMs: number;
  /** First retry delay after a failure; doubles up to `backoffCapMs` (full jitter). */
  backoffBaseMs: number;
  backoffCapMs: number;
  setTimer(ms: number, fn: () => void): () => void;
  random(): number;
  log: Logger;
  onUploadProgress?(sha256: string, sent: number, total: number): void;
  /**
   * Seconds an upstream that can is asked to hold a downlink pull open (`sync.downlinkHoldS`); 0 (the
   * default here) never asks. Pulls go on beside uploads either way (docs/decisions/270-control-first.md).
   */
  holdS?: number;
  /** Held pulls kept open at once where the upstream keeps two (`sync.heldPulls`, decision 340); default 2. */
  heldPulls?: number;
  /**
   * The upstreams' urls: each one's downlink is a lane of its own, pulled, held and cut on its own, so
   * one that stalls never holds up another (docs/decisions/410-independent-downlinks.md). Absent: one
   * lane over every upstream.
   */
  upstreams?: readonly string[];
  now?(): number;
  /**
   * Brings a wait forward to the site's contact plan (`WindowAim.wait`): it ends by the next window's
   * opening, and inside a window it is at most min(backoffCap, window / 4). Unset: waits as asked.
   */
  aim?(waitMs: number, now: number): number;
  /**
   * The site's contact plan has a window open at `now` (`WindowAim.openAt`): the link should be up, so
   * the pulls go beside the probe of a link that was down, not a round trip after it. Unset: never.
   */
  inWindow?(now: number): boolean;
}

/** One upstream's downlink (decision 410): its pulls, its standing held pulls, the pull the cycle started. */
interface Lane {
  url: string | undefined;
  pulls: DownlinkPulls;
  /** A standing held pull is open (the cycle then does not pull this lane itself). */
  standing: Promise<number> | null;
  /** The cycle's pull in flight: a lane still waiting on one is not pulled again (nor waited for). */
  pulling: Promise<PullOutcome> | null;
}

/**
 * Push, pull, then upload blobs (lowest priority), over and over. After a hub rejection the push waits
 * for its retry time (the pull goes on). While no upstream answers, each
 * cycle is one probe per upstream and the wait grows with jitter to a cap; `kick()` asks for a cycle
 * soon (after a new result), without breaking the backoff of a link that is down.
 */
export class SyncLoop {
  private failures = 0;
  /** A result was recorded during the current cycle (see `kick`). */
  private resultWaiting = false;
  /** Cycles in a row whose blob uploads gave way to results; after one, a blob goes first (no starving). */
  private blobsWaited = 0;
  private stopped = false;
  private readonly abort = new AbortController();
  /** Runs `cycle` one at a time, each after the wait the last one answered (hop's one kick-and-timer loop). */
  private readonly ticker: Ticker;
  /** Each upstream's downlink: pulls one at a time, beside uploads, held open where the upstream can. */
  private readonly lanes: Lane[];
  /** The cycle is sending blobs now (a result recorded then is pushed beside them: `pushBeside`). */
  private uploadingBlobs = false;
  /** A push beside the uploads in flight, and whether another result came during it. */
  private sidePush: Promise<void> | null = null;
  private sideAgain = false;
  lastOutcome: PushOutcome | null = null;

  constructor(private readonly deps: SyncLoopDeps) {
    const urls: Array<string | undefined> = deps.upstreams?.length ? [...deps.upstreams] : [undefined];
    this.lanes = urls.map((url) => ({
      url,
      standing: null,
      pulling: null,
      pulls: new DownlinkPulls({
        engine: { pullOnce: (hold) => deps.engine.pullOnce(hold, url) },
        intervalMs: deps.intervalMs,
        holdS: deps.holdS ?? 0,
        lanes: deps.heldPulls ?? 2,
        setTimer: deps.setTimer,
        now: deps.now ?? Date.now,
        onHoldCut: (cutMs, holdS) =>
          deps.log.warn(
            { cutAfterMs: cutMs, holdS, ...(url ? { upstream: url } : {}) },
            `held downlink pulls were cut twice after about ${Math.round(cutMs / 1000)} s (an idle timeout on the path, such as a proxy's): asking ${holdS} s from now on; set the relay's limits.maxHoldS under that timeout`,
          ),
      }),
    }));
    this.ticker = new Ticker({
      step: () => this.cycle().then((ms) => this.aimed(ms)),
      restMs: deps.intervalMs,
      setTimer: deps.setTimer,
      onError: (e) => {
        const next = backoffDelay(++this.failures, deps.backoffBaseMs, deps.backoffCapMs, deps.random);
        deps.log.warn({ err: (e as Error).message, retryInMs: next }, 'sync cycle failed; will retry');
        return this.aimed(next);
      },
    });
  }

  /** A wait brought forward to the contact plan (docs/decisions/450-contact-the-agent-proves.md). */
  private aimed(ms: number): number {
    return this.deps.aim ? this.deps.aim(ms, (this.deps.now ?? Date.now)()) : ms;
  }

  start(): void {
    this.ticker.start(0);
  }

  kick(): void {
    // During a cycle, a new result stops the blob uploads (before the next blob) and brings the next
    // cycle forward: over a minutes-long round trip, a result never waits behind a queue of blobs.
    // While no upstream answers, a kick does not break the backoff.
    if (this.ticker.busy) {
      this.resultWaiting = true;
      // A blob in flight can take many minutes on a slow link: the result goes up beside it, not after.
      if (this.uploadingBlobs && this.failures === 0) this.pushBeside();
    } else if (this.failures === 0) this.ticker.kick();
  }

  /**
   * Pushes what is pending while the cycle's blob uploads go on (docs/decisions/270-control-first.md):
   * results, apply states and acks of control reach the hub one round trip after they are recorded, not
   * after the detail in flight. One at a time, never beside the cycle's own push (the next cycle waits
   * for it first).
   */
  private pushBeside(): void {
    if (this.sidePush) {
      this.sideAgain = true;
      return;
    }
    this.sidePush = (async () => {
      do {
        this.sideAgain = false;
        this.lastOutcome = await this.deps.engine.pushOnce();
      } while (this.sideAgain && this.uploadingBlobs && !this.stopped);
    })()
      .catch((e: unknown) =>
        this.deps.log.warn(
          { err: (e as Error).message },
          'push beside the uploads failed; the next cycle sends it',
        ),
      )
      .finally(() => {
        this.sidePush = null;
      });
  }

  /** One cycle; answers the wait before the next, ms. */
  private async cycle(): Promise<number> {
    let next = this.deps.intervalMs;
    if (this.sidePush) await this.sidePush; // never two pushes at once
    this.resultWaiting = false;
    try {
      // Push and pull travel together: over a long delay that is one round trip per cycle, not two.
      // While the link is down only the push (a probe) goes out. Each lane's pull lands on its own
      // (`pulled`), never waited for here: one upstream that stalls holds up no other (decision 410).
      // In a window of the site's contact plan the held pulls go beside the probe, as the window opens: the
      // relay then holds one when control reaches it, a round trip sooner (docs/decisions/645-pulls-go-as-the-window-opens.md).
      if (this.failures === 0) this.pullLanes();
      else if (this.inWindow()) {
        this.keepStanding(undefined, true);
        this.pullLanes();
      }
      // Back from a down link, the pulls go as soon as a probe answers, beside the push, not a round trip
      // after it: control waiting at the relay reaches the agent one light time sooner (issue 56's
      // "control at the first contact that could carry it").
      const pushed = await this.deps.engine.pushOnce(() => {
        if (this.failures > 0) this.pullLanes();
      });
      this.lastOutcome = pushed;
      if (pushed.kind === 'unreachable') {
        next = backoffDelay(
          ++this.failures,
          this.deps.backoffBaseMs,
          this.deps.backoffCapMs,
          this.deps.random,
        );
        // An upstream that answered 401/403 was reached: it refuses this agent's credential (issue 42).
        const refusals = pushed.refusals ?? [];
        const others = pushed.errors;
        for (const r of refusals) this.refused(r, { retryInMs: next });
        if (others.length > 0 || refusals.length === 0)
          this.deps.log.warn({ errors: others, retryInMs: next }, 'no upstream reachable; will retry');
      } else {
        const wasDown = this.failures > 0;
        this.failures = 0;
        if (wasDown) this.pullLanes();
        // A rejected agent pushes again at the rejection's retry time, or at once when a hub ack shows
        // that the hub takes its bundles now (its enrolment took effect: `pulled` kicks).
        if (pushed.kind === 'held') next = Math.min(next, pushed.retryInMs);
        if (!this.stopped) {
          let asked = 0;
          let gaveWay = false;
          const yieldToResults = () => {
            const first = asked++ === 0;
            gaveWay = this.resultWaiting && (!first || this.blobsWaited === 0);
            return gaveWay;
          };
          const uploading = this.deps.engine.uploadBlobsOnce(
            this.deps.onUploadProgress,
            this.abort.signal,
            yieldToResults,
          );
          // Control first: the downlink is pulled beside a long upload, not after it: by the standing held
          // pulls where the upstream holds them (both lanes, decision 340), else one per interval.
          this.keepStanding();
          for (const lane of this.lanes)
            if (!lane.standing)
              lane.pulls
                .whileBusy(uploading, (o) => this.pulled(o, lane))
                .catch((e: unknown) =>
                  this.deps.log.warn(
                    { err: (e as Error).message, upstream: lane.url },
                    'downlink pull beside the uploads failed; the next cycle pulls again',
                  ),
                );
          this.uploadingBlobs = true;
          const sent = await uploading.finally(() => {
            this.uploadingBlobs = false;
          });
          // Only blobs that really gave way count: a cycle with no blob to send is not one (counting it
          // let the next cycle send a new plan's detail before the plan's own result).
          this.blobsWaited = gaveWay && sent === 0 ? this.blobsWaited + 1 : 0;
        }
        if (this.resultWaiting && pushed.kind !== 'held') next = 0;
        this.keepStanding();
      }
    } catch (e) {
      next = backoffDelay(++this.failures, this.deps.backoffBaseMs, this.deps.backoffCapMs, this.deps.random);
      this.deps.log.warn({ err: (e as Error).message, retryInMs: next }, 'sync cycle failed; will retry');
    }
    return next;
  }

  /** An upstream refused the credential: said in the words docs/operations.md gives, on either lane. */
  private refused(r: Refusal, fields: Record<string, unknown>): void {
    this.deps.log.warn(
      { upstream: r.upstream, ...fields },
      `refused by ${r.upstream}: ${r.reason} (check the token in its upstreams[].tokenFile; at the relay: relay token add)`,
    );
  }

  /** Starts a pull on every lane that has neither a standing held pull nor a pull in flight. */
  private pullLanes(): void {
    if (this.stopped) return;
    for (const lane of this.lanes) {
      if (lane.standing || lane.pulling) continue;
      lane.pulling = lane.pulls
        .pull()
        .then((o) => {
          this.pulled(o, lane);
          return o;
        })
        .finally(() => {
          lane.pulling = null;
        });
      lane.pulling.catch((e: unknown) =>
        this.deps.log.warn({ err: (e as Error).message, upstream: lane.url }, 'downlink pull failed'),
      );
    }
  }

  /**
   * What a lane's pull brought: a lifted rejection brings the next push forward, and a lane whose
   * upstream holds pulls keeps them open from now on, whatever the other lanes do.
   */
  private pulled(o: PullOutcome, lane: Lane): void {
    if (o.errors.length > 0) this.deps.log.warn({ errors: o.errors }, 'downlink pull failed');
    for (const r of o.refusals ?? []) this.refused(r, { lane: 'downlink' });
    if (o.resumed) this.ticker.kick();
    this.keepStanding(lane);
  }

  /** The site's contact plan has a window open now (the link should be up). */
  private inWindow(): boolean {
    return this.deps.inWindow?.(this.deps.now?.() ?? Date.now()) ?? false;
  }

  /**
   * Opens standing held pulls on each lane whose upstream has shown it holds pulls, while the link works
   * or, `asWindowOpens`, while a window of the contact plan is open though no probe has answered yet: a
   * pull that fails ends its run, and only a cycle opens one again, so a window whose link is down costs
   * one pull a lane per cycle.
   */
  private keepStanding(only?: Lane, asWindowOpens = false): void {
    for (const lane of only ? [only] : this.lanes) {
      if (lane.standing || this.stopped || !lane.pulls.holds) continue;
      if (this.failures > 0 && !asWindowOpens) continue;
      lane.standing = lane.pulls
        .standing(
          () => this.failures === 0 || (asWindowOpens && this.inWindow()),
          (o) => this.pulled(o, lane),
        )
        .finally(() => {
          lane.standing = null;
        });
    }
  }

  /** Stops after the current cycle; an upload in progress is paused (it resumes on the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const lane of this.lanes) lane.pulls.stop();
    this.abort.abort();
    // an exchange in progress is not waited for: an upstream minutes away, or hung, would hold the stop
    // until the grace cuts it (edge-agent run); what it carried goes again at the next start
    this.deps.engine.abortExchanges?.();
    await this.ticker.stop();
    await Promise.all(this.lanes.map((l) => l.standing));
    await Promise.all(this.lanes.map((l) => l.pulling?.catch(() => null)));
    await this.sidePush;
  }
}
