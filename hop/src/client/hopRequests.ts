import {
  CLOCK_HEADER,
  CLOCK_SENT_HEADER,
  type ClockEstimate,
  formatClock,
  readCappedText,
  TRUSTED_CLOCK,
} from '@driftline/protocol';
import { watchPromptAnswer } from './answerWatch.js';
import { ExchangeTimes } from './exchangeTimes.js';
import type { HopClientOptions } from './hopClientOptions.js';
import type { HopTransport } from './hopTransport.js';
import { type PlainInit, PlainTransport } from './plainRequest.js';
import { answered, type HopResult, thrown } from './result.js';

/** Error bodies are a line of JSON; more is not read. */
export const ERROR_BODY_CAP = 64 * 1024;

/**
 * The requests of one {@link HopClient}: their heads (the token, the clock terms), their deadlines (the
 * client's timeout, its shutdown, an answer due at once: docs/decisions/515-answers-due-at-once.md) and
 * their timing (every answered exchange is a round trip and perhaps a clock sample).
 */
export class HopRequests {
  /** The times of every exchange: the clock offset, the upstream's stamps, the round trip. */
  readonly times = new ExchangeTimes();
  readonly stopping = new AbortController();
  /** Requests with only the headers the hop API reads (not fetch's own; decision 380). */
  readonly transport: HopTransport;

  constructor(
    readonly url: string,
    private readonly timeoutMs: number,
    private readonly now: () => number,
    private readonly opts: HopClientOptions,
  ) {
    this.transport = opts.transport ?? new PlainTransport();
  }

  /** The token for the next request. */
  token(): string {
    const t = this.opts.token;
    return typeof t === 'function' ? t() : t;
  }

  /** The caller's clock minus the upstream's; null before the first timed exchange. */
  clock(): ClockEstimate | null {
    return this.opts.trustedClock ? TRUSTED_CLOCK : this.times.best(this.now(), performance.now());
  }

  /** The least send-to-headers time of the last requests answered, ms; null before one was. */
  roundTripMs(): number | null {
    return this.times.roundTripMs();
  }

  /** The signal a request runs under: the client's timeout, `abort()`, and the caller's own. */
  signal(extra?: AbortSignal, timeoutMs = this.timeoutMs): AbortSignal {
    return AbortSignal.any([AbortSignal.timeout(timeoutMs), this.stopping.signal, ...(extra ? [extra] : [])]);
  }

  /**
   * One request. `report`: send this client's clock estimate (`driftline-clock`); the upstream uses it only
   * to compose the clocks of posted bundles and keeps the last one, so downlink pulls leave it out.
   * `time`: send `driftline-sent`, so the upstream stamps its times (a clock sample); a held pull sends it
   * at most once per `HELD_SAMPLE_EVERY_MS` (HopClient; docs/decisions/320-bytes-on-a-costly-link.md).
   * `prompt`: the answer is due at once (no hold), so it is cut when it does not begin within the round
   * trip, `stallMs` and the body's time at the floor rate (`watchPromptAnswer`); a held pull watches its own.
   */
  async request(
    path: string,
    init: Omit<PlainInit, 'signal'>,
    signal?: AbortSignal,
    report = true,
    time = true,
    timeoutMs = this.timeoutMs,
    prompt = true,
  ): Promise<HopResult<Response>> {
    const bytes = typeof init.body === 'string' ? Buffer.byteLength(init.body) : (init.body?.length ?? 0);
    const watch = prompt ? watchPromptAnswer(this, bytes, this.promptWatch(), signal) : null;
    if (!watch) return this.requestOnce(path, init, signal, report, time, timeoutMs);
    try {
      const r = await this.requestOnce(path, init, watch.signal, report, time, timeoutMs, watch.begun);
      return r.ok ? r : (watch.cut() ?? r);
    } finally {
      watch.begun();
    }
  }

  /** The answer-begins rule of {@link request} for requests due at once. */
  promptWatch() {
    return {
      ...(this.opts.stallMs === undefined ? {} : { stallMs: this.opts.stallMs }),
      floorBytesPerS: this.opts.floorBytesPerS ?? 128,
    };
  }

  private async requestOnce(
    path: string,
    init: Omit<PlainInit, 'signal'>,
    signal: AbortSignal | undefined,
    report: boolean,
    time: boolean,
    timeoutMs: number,
    begun?: () => void,
  ): Promise<HopResult<Response>> {
    try {
      const own = report ? this.clock() : null;
      const t0 = this.now();
      // Durations on the monotonic clock: `now` is the agent's wall clock, which may jump (or be set).
      const m0 = performance.now();
      const res = await this.transport.request(`${this.url}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${this.token()}`,
          ...(time ? { [CLOCK_SENT_HEADER]: String(t0) } : {}),
          ...(own ? { [CLOCK_HEADER]: formatClock(own) } : {}),
          ...init.headers,
        },
        signal: this.signal(signal, timeoutMs),
      });
      // the request resolves when the answer's headers arrive: t3, before any body is read.
      const t3 = this.now();
      const m3 = performance.now();
      begun?.();
      this.times.record(t0, res.headers, t3, m3 - m0, m3);
      // 304: a conditional downlink pull that found nothing (only pullDownlink sends conditions).
      if (res.ok || res.status === 304) return { ok: true, value: res };
      return answered(res.status, await readCappedText(res, ERROR_BODY_CAP));
    } catch (e) {
      return thrown(e);
    }
  }
}
