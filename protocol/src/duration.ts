/**
 * Durations as people write them, one grammar for every place that reads one (contact windows, the CLI's
 * `--expires`, `--grace`, `--timeout`, waiver expiries; docs/decisions/280-one-place-per-decision.md):
 * `500ms`, `90s`, `4m`, `1h30m`, `2d`, `1.5h`. Read token by token with a sticky regex (linear time).
 */

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `1h30m` → 5_400_000; null when not a duration (a bare number is not one: say its unit). */
export function parseDuration(text: string): number | null {
  const token = /(\d{1,9}(?:\.\d{1,6})?)(ms|s|m|h|d)/y;
  let ms = 0;
  let at = 0;
  while (at < text.length) {
    token.lastIndex = at;
    const m = token.exec(text);
    if (!m) return null;
    ms += Number(m[1]) * (UNITS[m[2] as string] ?? 0);
    at = token.lastIndex;
  }
  return ms > 0 ? ms : null;
}

/**
 * A command-line duration: what {@link parseDuration} reads, or plain seconds (`600`), blanks around it
 * ignored; milliseconds, or null when it is neither (or zero).
 */
export function parseCliDuration(text: string): number | null {
  const t = text.trim();
  if (/^\d{1,9}(?:\.\d{1,6})?$/.test(t)) {
    const ms = Number(t) * 1000;
    return ms > 0 ? ms : null;
  }
  return parseDuration(t);
}

/**
 * An expiry: a duration from `now` ({@link parseCliDuration}) or an ISO time, as a time in ms; null when
 * neither, not after `now`, or more than a year ahead.
 */
export function parseExpiry(text: string, now: number): number | null {
  const d = parseCliDuration(text);
  const ms = d === null ? Date.parse(text) : now + d;
  if (!Number.isFinite(ms) || ms <= now || ms > now + 366 * 86_400_000) return null;
  return ms;
}
