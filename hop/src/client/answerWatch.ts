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
  const cutter = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let done = false;
  let why: string | null = null;
  // Elapsed on the monotonic clock: a wall clock set back would arm a deadline already past.
  const m0 = performance.now();
  const arm = (rttMs: number) => {
    if (done || stallMs === undefined) return;
    const ms = waitS * 1000 + rttMs + stallMs - (performance.now() - m0);
    timer = setTimeout(
      () => {
        why = `no answer within the ${waitS} s hold, the ${Math.round(rttMs / 1000)} s round trip and ${Math.round(stallMs / 1000)} s`;
        cutter.abort();
      },
      Math.max(0, ms),
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
  return {
    signal: signal ? AbortSignal.any([signal, cutter.signal]) : cutter.signal,
    /** The answer's headers came (or the request ended): its body is watched from here on. */
    begun: () => {
      done = true;
      clearTimeout(timer);
    },
    cut: (): HopFailure | null =>
      why !== null && !signal?.aborted ? failure('stalled', `${client.url}: stalled: ${why}`, true) : null,
  };
}
