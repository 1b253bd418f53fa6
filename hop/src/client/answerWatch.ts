import { failure, type HopFailure } from './result.js';

/** What {@link watchAnswer} asks of the client: its round trip, known or probed. */
export interface RoundTrips {
  url: string;
  /** The least send-to-headers time of the last requests answered, ms; null before one was. */
  roundTripMs(): number | null;
  /** One small request, to learn the round trip. */
  probe(): Promise<{ ok: boolean }>;
}

/**
 * The one deadline both watches below set: `arm(ms, why)` cuts the request `ms` from now unless its answer
 * has begun (`begun()`); `cut()` then answers the `stalled` failure naming `why`, not when the caller's
 * own `signal` ended it.
 */
function answerDeadline(url: string, signal?: AbortSignal) {
  const cutter = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let done = false;
  let why: string | null = null;
  return {
    arm(ms: number, reason: () => string): void {
      if (done) return;
      timer = setTimeout(
        () => {
          why = reason();
          cutter.abort();
        },
        Math.max(0, ms),
      );
    },
    signal: signal ? AbortSignal.any([signal, cutter.signal]) : cutter.signal,
    /** The answer's headers came (or the request ended): its body is watched from here on. */
    begun: () => {
      done = true;
      clearTimeout(timer);
    },
    cut: (): HopFailure | null =>
      why !== null && !signal?.aborted ? failure('stalled', `${url}: stalled: ${why}`, true) : null,
  };
}

/**
 * The deadline of a pull's answer (with `stallMs`): it must begin within the hold, the round trip and
 * `stallMs`, or it is cut (`cut()` then answers the `stalled` failure). An upstream whose round trip is
 * not known yet is probed beside the pull, and the deadline is set when the probe answers; a probe
 * that fails leaves the request timeout alone in force.
 */
export function watchAnswer(
  client: RoundTrips,
  waitS: number,
  stallMs: number | undefined,
  signal?: AbortSignal,
) {
  const d = answerDeadline(client.url, signal);
  // Elapsed on the monotonic clock: a wall clock set back would arm a deadline already past.
  const m0 = performance.now();
  const arm = (rttMs: number) => {
    if (stallMs === undefined) return;
    d.arm(
      waitS * 1000 + rttMs + stallMs - (performance.now() - m0),
      () =>
        `no answer within the ${waitS} s hold, the ${Math.round(rttMs / 1000)} s round trip and ${Math.round(stallMs / 1000)} s`,
    );
  };
  if (stallMs !== undefined) {
    const rtt = client.roundTripMs();
    if (rtt !== null) arm(rtt);
    else
      void client.probe().then((p) => {
        const known = client.roundTripMs();
        if (p.ok && known !== null) arm(known);
      });
  }
  const { signal: watched, begun, cut } = d;
  return { signal: watched, begun, cut };
}

/**
 * The deadline of an answer due at once (a push, a probe, a registration: no hold), with `stallMs`: it
 * must begin within the upstream's measured round trip, `stallMs`, and the time the request's `bytes` take
 * at `floorBytesPerS`, or it is cut (`cut()` then answers the `stalled` failure). A hung upstream that
 * takes a push and never answers held every push of the agent for the request timeout (30 minutes),
 * other upstreams included (docs/decisions/515-answers-due-at-once.md). With no round trip measured yet
 * (an upstream that never answered: minutes one way, perhaps) or no `stallMs`, none: the request timeout
 * alone, as before.
 */
export function watchPromptAnswer(
  client: Pick<RoundTrips, 'url' | 'roundTripMs'>,
  bytes: number,
  o: { stallMs?: number; floorBytesPerS: number },
  signal?: AbortSignal,
) {
  const rtt = client.roundTripMs();
  const stallMs = o.stallMs;
  if (stallMs === undefined || rtt === null) return null;
  const sendMs = (bytes * 1000) / o.floorBytesPerS;
  const d = answerDeadline(client.url, signal);
  d.arm(
    rtt + stallMs + sendMs,
    () =>
      `no answer within the ${Math.round(rtt / 1000)} s round trip, ${Math.round(stallMs / 1000)} s and ${Math.round(sendMs / 1000)} s to send ${bytes} B`,
  );
  const { signal: watched, begun, cut } = d;
  return { signal: watched, begun, cut };
}
