import {
  answerSample,
  CLOCK_RECEIVED_HEADER,
  CLOCK_REPLIED_HEADER,
  type ClockEstimate,
  ClockFilter,
  type ClockSample,
  DRIFT_PER_MS,
  exchangeSample,
  parseClockTime,
  parseStamp,
  STAMP_HEADER,
  type StampedExchange,
  wallMovedSince,
} from '@driftline/protocol';

/** Send-to-headers times kept for the round trip's bound. */
const RTTS_KEPT = 8;
/** Stamped exchanges kept for the custody record's term. */
const STAMPED_KEPT = 8;
/** The wall and monotonic clocks are read one after the other: what they may disagree by, unmoved, ms. */
const MOVED_SLACK_MS = 2;

/**
 * What a hop client learns from the times of its exchanges: the caller's clock minus the upstream's
 * (NTP's clock filter over every timed answer), the upstream's signed stamps (decision 290) and the
 * round trip's bound.
 */
export class ExchangeTimes {
  private readonly filter = new ClockFilter();
  /** The last exchanges the upstream stamped, with their round trips and samples. */
  private readonly stamped: { x: StampedExchange; rttMs: number; sample: ClockSample }[] = [];
  /**
   * Send-to-headers times of the last answered requests, ms: each is at least the round trip (a held
   * pull's is longer), so the least bounds when an answer must begin; an upstream can only lengthen it.
   */
  private readonly rtts: number[] = [];
  /** When the last exchange gave a clock sample (the caller's clock), or null before one did. */
  private sampledAt: number | null = null;

  /**
   * One answered request: sent at `t0`, its headers in at `t3` (the caller's clock), `elapsedMs` between
   * on the monotonic clock, which read `mono` at `t3` (when given).
   */
  record(t0: number, headers: Headers, t3: number, elapsedMs: number, mono?: number): void {
    const sample = this.exchange(answerSample(t0, headers, t3), t3, elapsedMs, mono);
    if (!sample) return;
    const stamp = parseStamp(headers.get(STAMP_HEADER));
    const t1 = parseClockTime(headers.get(CLOCK_RECEIVED_HEADER));
    const t2 = parseClockTime(headers.get(CLOCK_REPLIED_HEADER));
    if (stamp && t1 !== null && t2 !== null) {
      this.stamped.push({ x: { t: [t0, t1, t2, t3], ...stamp }, rttMs: sample.rttMs, sample });
      if (this.stamped.length > STAMPED_KEPT) this.stamped.shift();
    }
  }

  /**
   * One exchange whose server times came in its answer's body (a hop v2 custody stamp `[t0, t1, t2]`,
   * decision 495), or none (only a round trip).
   */
  recordTimes(
    times: readonly [number, number, number] | null,
    t3: number,
    elapsedMs: number,
    mono?: number,
  ): void {
    this.exchange(times ? exchangeSample(times[0], times[1], times[2], t3) : null, t3, elapsedMs, mono);
  }

  /** Keeps an exchange's round trip and its clock sample, when it gave one. */
  private exchange(
    found: ClockSample | null,
    t3: number,
    elapsedMs: number,
    mono: number | undefined,
  ): ClockSample | null {
    this.rtts.push(elapsedMs);
    if (this.rtts.length > RTTS_KEPT) this.rtts.shift();
    if (!found) return null;
    const sample = mono === undefined ? found : { ...found, mono };
    this.filter.add(sample);
    this.sampledAt = t3;
    return sample;
  }

  /** Whether no exchange gave a clock sample in the `ms` before `now` (or none ever did). */
  sampleOlderThan(now: number, ms: number): boolean {
    return this.sampledAt === null || now - this.sampledAt >= ms;
  }

  /**
   * The caller's clock minus the upstream's at `now` (`mono`: the monotonic clock then, so that a wall
   * clock stepped or skewed since the samples is stated where it is); null before the first timed exchange.
   */
  best(now: number, mono?: number): ClockEstimate | null {
    return this.filter.best(now, mono);
  }

  /** Whether the upstream stamped any of the exchanges kept (a keyed node; decision 290). */
  stamps(): boolean {
    return this.stamped.length > 0;
  }

  /**
   * Of the stamped exchanges kept, the one with the least round trip (as the clock filter picks), among
   * those since which the wall clock (`now`) moved against the monotonic one (`mono`) by no more than the
   * 15 ppm the receiver ages the term by: the receiver reads the term from the exchange's own times, so
   * one from before a step or through a skew would state the clock where it was
   * (docs/decisions/550-clock-moved-since-its-sample.md). Null when none is left.
   */
  stampedExchange(now?: number, mono?: number): StampedExchange | null {
    let best: { x: StampedExchange; rttMs: number } | null = null;
    for (const s of this.stamped) {
      const moved = now === undefined ? null : wallMovedSince(s.sample, now, mono);
      // moved is known only when both monotonic readings are
      const since = moved === null ? 0 : Math.max(0, (mono as number) - (s.sample.mono as number));
      if (moved !== null && Math.abs(moved) > MOVED_SLACK_MS + since * DRIFT_PER_MS) continue;
      if (!best || s.rttMs < best.rttMs) best = s;
    }
    return best?.x ?? null;
  }

  /** The least send-to-headers time of the last requests answered, ms; null before one was. */
  roundTripMs(): number | null {
    return this.rtts.length === 0 ? null : Math.min(...this.rtts);
  }
}
