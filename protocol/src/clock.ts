/**
 * Clock offsets per hop, NTP style (T2 in docs/architecture.md#invariants; docs/decisions/070-clock-offsets.md).
 *
 * Every hop exchange carries four times: the client's send time `t0` (request header), the server's
 * receive and reply times `t1` and `t2` (response headers), and the client's receive time `t3`. With
 * θ = server clock − client clock and one-way delays d↑, d↓ ≥ 0 (RFC 5905 §8):
 *   t1 = t0 + d↑ + θ,  t3 = t2 + d↓ − θ  ⇒  θ̂ = ((t1 − t0) + (t2 − t3)) / 2,  δ = (t3 − t0) − (t2 − t1),
 * and |θ̂ − θ| = |d↑ − d↓| / 2 ≤ δ / 2: half the round trip bounds the error of any asymmetry.
 */

/** Request header: the client's clock when it sent the request, ms since the epoch (`t0`). */
export const CLOCK_SENT_HEADER = 'driftline-sent';
/** Response header: the server's clock when the request arrived (`t1`); only when `t0` was sent. */
export const CLOCK_RECEIVED_HEADER = 'driftline-received';
/** Response header: the server's clock when it answered (`t2`). */
export const CLOCK_REPLIED_HEADER = 'driftline-replied';
/**
 * Request header: the client's own clock minus the server's, from its earlier exchanges with this
 * server: `<offsetMs>;u=<uncertaintyMs>`, or `trusted` (a disciplined clock, not to be corrected).
 */
export const CLOCK_HEADER = 'driftline-clock';
/**
 * Request header of `POST /v1/bundles`: for each source of the batch's bundles, its clock minus the
 * client's, `<site>/<agent>=<estimate>, …`. A source not listed has no estimate (the receiver falls back).
 */
export const SOURCE_CLOCKS_HEADER = 'driftline-source-clocks';

/** Longest `driftline-source-clocks` value a sender writes; sources past it go without an estimate. */
export const MAX_SOURCE_CLOCKS_CHARS = 6 * 1024;

/**
 * One clock against a reference clock: `offsetMs` = that clock − the reference; the truth lies within
 * `offsetMs ± uncertaintyMs`. `trusted`: the clock says it is disciplined (GPS/NTP) and is not corrected.
 */
export interface ClockEstimate {
  offsetMs: number;
  uncertaintyMs: number;
  trusted?: true;
}

/** The estimate of a disciplined clock: no correction, nothing uncertain. */
export const TRUSTED_CLOCK: ClockEstimate = Object.freeze({ offsetMs: 0, uncertaintyMs: 0, trusted: true });

/** One exchange's estimate of the client's clock minus the server's, with its round trip and when (client time). */
export interface ClockSample extends ClockEstimate {
  rttMs: number;
  at: number;
  /**
   * The client's monotonic clock (`performance.now()`) at `at`, when known. A wall clock set (stepped) or
   * skewed since the sample moves against it, and the sample is read with that movement
   * (docs/decisions/550-clock-moved-since-its-sample.md).
   */
  mono?: number;
}

/**
 * The estimate one exchange gives of the client clock minus the server clock (the opposite sign of
 * RFC 5905's θ, so that offsets compose by adding along the path toward the hub). Null when the four
 * times cannot come from one exchange (a negative round trip or server time).
 */
export function exchangeSample(t0: number, t1: number, t2: number, t3: number): ClockSample | null {
  if (![t0, t1, t2, t3].every(Number.isFinite)) return null;
  const rtt = t3 - t0 - (t2 - t1);
  if (t3 < t0 || t2 < t1 || rtt < 0) return null;
  return {
    offsetMs: Math.round((t0 - t1 + (t3 - t2)) / 2),
    uncertaintyMs: Math.ceil(rtt / 2),
    rttMs: rtt,
    at: t3,
  };
}

/**
 * The sample of one answer, from the server's time headers, for a request the client sent at `t0` and whose
 * answer's headers arrived at `t3`; null when the server stamped no times (an older peer) or impossible ones.
 */
export function answerSample(
  t0: number,
  headers: { get(name: string): string | null },
  t3: number,
): ClockSample | null {
  const t1 = parseClockTime(headers.get(CLOCK_RECEIVED_HEADER));
  const t2 = parseClockTime(headers.get(CLOCK_REPLIED_HEADER));
  return t1 === null || t2 === null ? null : exchangeSample(t0, t1, t2, t3);
}

/** How fast an estimate ages: NTP's assumed worst frequency error of a clock (RFC 5905, PHI = 15 ppm). */
export const DRIFT_PER_MS = 15e-6;

/**
 * How far the client's wall clock moved against its monotonic clock between `s` and (`now`, `mono`): a
 * step or a skew of the wall clock since the sample (0 for a clock left alone). Null when either reading
 * of the monotonic clock is unknown.
 */
export function wallMovedSince(s: ClockSample, now: number, mono: number | undefined): number | null {
  if (s.mono === undefined || mono === undefined) return null;
  return now - mono - (s.at - s.mono);
}

/**
 * NTP's clock filter (RFC 5905 §10): the last `size` samples of one hop, of which the one with the
 * least round trip is the estimate (least delay, least room for asymmetry). Its uncertainty grows by
 * {@link DRIFT_PER_MS} with the sample's age, since the clocks drift apart after it.
 *
 * Given the monotonic clock (`best(now, mono)`, samples with `mono`), a sample is read with how far the
 * wall clock moved against it since ({@link wallMovedSince}): a wall clock stepped 5 h back, or gaining
 * 20 ms a second, is then stated where it is, not where it was when the least-round-trip sample was
 * taken; the sample ages by the monotonic clock (docs/decisions/550-clock-moved-since-its-sample.md).
 */
export class ClockFilter {
  private readonly samples: ClockSample[] = [];

  constructor(private readonly size = 8) {}

  add(sample: ClockSample): void {
    this.samples.push(sample);
    if (this.samples.length > this.size) this.samples.shift();
  }

  /**
   * The least-round-trip sample as an estimate at `now` (client wall time; `mono` the monotonic clock
   * then, when known), or null before the first sample.
   */
  best(now: number, mono?: number): ClockEstimate | null {
    let best: ClockSample | null = null;
    for (const s of this.samples) if (!best || s.rttMs < best.rttMs) best = s;
    if (!best) return null;
    const moved = wallMovedSince(best, now, mono);
    const age = Math.max(0, moved === null ? now - best.at : (mono ?? 0) - (best.mono ?? 0));
    return {
      offsetMs: moved === null ? best.offsetMs : Math.round(best.offsetMs + moved),
      uncertaintyMs: Math.ceil(best.uncertaintyMs + age * DRIFT_PER_MS),
    };
  }
}

/**
 * Composes `a` (clock A − clock B) with `b` (clock B − clock C) into clock A − clock C: offsets add and
 * so do uncertainties (each error is bounded on its own). A trusted `a` stays trusted: a disciplined
 * clock is not corrected whatever the hops between say.
 */
export function composeClocks(a: ClockEstimate, b: ClockEstimate): ClockEstimate {
  if (a.trusted) return TRUSTED_CLOCK;
  return { offsetMs: a.offsetMs + b.offsetMs, uncertaintyMs: a.uncertaintyMs + b.uncertaintyMs };
}

/** Largest offset or uncertainty a header (or a v2 push) may state (a year); anything beyond is refused as garbage. */
export const MAX_CLOCK_MS = 366 * 86_400_000;
const ESTIMATE = /^(-?\d{1,14});u=(\d{1,14})$/;

/** `<offsetMs>;u=<uncertaintyMs>`, or `trusted`. */
export function formatClock(e: ClockEstimate): string {
  return e.trusted ? 'trusted' : `${Math.round(e.offsetMs)};u=${Math.ceil(e.uncertaintyMs)}`;
}

/** Reads {@link formatClock}'s text; null when it is anything else (the sender gets today's fallback). */
export function parseClock(text: string | undefined | null): ClockEstimate | null {
  const s = (text ?? '').trim();
  if (s === 'trusted') return TRUSTED_CLOCK;
  const m = ESTIMATE.exec(s);
  if (!m) return null;
  const offsetMs = Number(m[1]);
  const uncertaintyMs = Number(m[2]);
  if (Math.abs(offsetMs) > MAX_CLOCK_MS || uncertaintyMs > MAX_CLOCK_MS) return null;
  return { offsetMs, uncertaintyMs };
}

/** A time header (`t0`, `t1`, `t2`): a non-negative integer of ms since the epoch, else null. */
export function parseClockTime(text: string | undefined | null): number | null {
  const s = (text ?? '').trim();
  return /^\d{1,15}$/.test(s) ? Number(s) : null;
}

const SOURCE = /^[a-z0-9][a-z0-9._-]{0,62}\/[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * The `driftline-source-clocks` value for `clocks` (source `site/agent` → its clock minus the sender's),
 * at most `maxChars` long: entries that do not fit are left out (their bundles fall back at the receiver).
 */
export function formatSourceClocks(
  clocks: ReadonlyMap<string, ClockEstimate>,
  maxChars = MAX_SOURCE_CLOCKS_CHARS,
): string {
  const parts: string[] = [];
  let length = 0;
  for (const [source, e] of clocks) {
    if (!SOURCE.test(source)) continue;
    const part = `${source}=${formatClock(e)}`;
    if (length + part.length + 2 > maxChars) continue;
    length += part.length + 2;
    parts.push(part);
  }
  return parts.join(', ');
}

/** Reads `driftline-source-clocks`; malformed entries are skipped, at most `maxEntries` are read. */
export function parseSourceClocks(
  text: string | undefined | null,
  maxEntries = 1000,
): Map<string, ClockEstimate> {
  const out = new Map<string, ClockEstimate>();
  if (!text) return out;
  for (const part of text.slice(0, 4 * MAX_SOURCE_CLOCKS_CHARS).split(',')) {
    if (out.size >= maxEntries) break;
    const eq = part.indexOf('=');
    const source = part.slice(0, eq).trim();
    const e = eq > 0 ? parseClock(part.slice(eq + 1)) : null;
    if (e && SOURCE.test(source)) out.set(source, e);
  }
  return out;
}
