import { confirmationWaitMs } from './newsWait.js';

/**
 * Whether a cron round is under way, for the ack a push may ask to come later (push field 11, `ackLater`:
 * docs/decisions/525-acks-wait-for-the-round.md). A round is under way from a batch recorded with
 * `moreComing` until the round's last batch (recorded without it), or until the longest a held result of
 * the round may wait has passed since the last such batch: by then its next push is due, or the round
 * ended without a word (the agent stopped, a plan hangs). In memory only: after a restart no push asks
 * until the next round's batch says more is coming.
 */
export class RoundUnderWay {
  private until = 0;
  private waitMs = 0;

  private readonly longestMs: number;

  /**
   * `confirmationsMs`: the longest a held confirmation waits; `resendAfterMs`: after it the agent sends
   * what no ack covered again, so a round never asks more than half of it (its acks come before that).
   */
  constructor(confirmationsMs: number, resendAfterMs: number) {
    this.longestMs = Math.min(confirmationsMs, resendAfterMs / 2);
  }

  /** A batch recorded: `moreComing` as the recorder said, with its inputs' cadences (seconds). */
  recorded(moreComing: boolean, inputs: readonly { scheduledEveryS?: number }[], now: number): void {
    if (!moreComing) {
      this.until = 0;
      return;
    }
    let wait = this.longestMs;
    for (const i of inputs) wait = Math.min(wait, confirmationWaitMs(i.scheduledEveryS) ?? wait);
    this.waitMs = wait;
    this.until = now + wait;
  }

  /** Seconds within which more of the round follows (the hub acks at the latest then); undefined: none. */
  ackLaterS(now: number): number | undefined {
    return now < this.until && this.waitMs >= 1000 ? Math.ceil(this.waitMs / 1000) : undefined;
  }
}
