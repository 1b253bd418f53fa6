/**
 * The optional IANA time zone a contact window or a plan schedule may end with (`0 2 * * * for 30m tz
 * Europe/Berlin`, `0 6 * * * tz America/Santiago`): one suffix, read by one function, so a window written
 * beside a schedule means the same hour (docs/decisions/590-windows-declared-once.md). Pure; the
 * zone's rules come from the runtime's ICU data (`Intl`).
 */

const SUFFIX = / tz (\S+)$/;
const DAY = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** `Europe/Berlin`, `UTC`, `America/Argentina/Buenos_Aires`: a zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  return formatterOf(name) !== null;
}

function formatterOf(zone: string): Intl.DateTimeFormat | null {
  const hit = formatters.get(zone);
  if (hit) return hit;
  if (zone.length > 64 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return null;
  try {
    const f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size >= 64) formatters.delete(formatters.keys().next().value as string);
    formatters.set(zone, f);
    return f;
  } catch {
    return null;
  }
}

/**
 * Splits a trailing ` tz <zone>` off `text` (spaces already single): the text before it and the zone, or
 * why the zone is not one. No suffix: the text as it is and `zone` null.
 */
export function splitZone(
  text: string,
): { ok: true; body: string; zone: string | null } | { ok: false; error: string } {
  const m = SUFFIX.exec(text);
  if (!m) return { ok: true, body: text, zone: null };
  const zone = m[1] as string;
  if (!isTimeZone(zone))
    return {
      ok: false,
      error: `'${zone}' is not a time zone this program knows; write an IANA name (tz Europe/Berlin, tz UTC)`,
    };
  return { ok: true, body: text.slice(0, m.index), zone };
}

/** How far `zone`'s wall clock is ahead of UTC at `ms`, in milliseconds. */
function offsetAt(zone: string, ms: number): number {
  const f = formatterOf(zone);
  if (!f) return 0;
  const parts: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const wall = Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  return wall - Math.floor(ms / 1000) * 1000;
}

/**
 * A local date and time without an offset (`2026-11-27T02:00`, seconds and fractions optional) read in
 * `zone`, as epoch milliseconds; null when it is not such a text. A time the spring change skips reads
 * as the instant an hour later on the wall clock; a repeated autumn time as its first occurrence.
 */
export function zonedIsoMs(text: string, zone: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?$/.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((v) => Number(v ?? 0)) as number[];
  const frac = m[7] ? Math.round(Number(m[7]) * 1000) : 0;
  const guess = Date.UTC(y as number, (mo as number) - 1, d, h, mi, s) + frac;
  if (!Number.isFinite(guess)) return null;
  // The zone's offsets a day either side: one of them is the offset at the time itself (no zone changes
  // twice in two days). A candidate holds when the zone's offset at it is the one it was made with.
  const before = offsetAt(zone, guess - DAY);
  const after = offsetAt(zone, guess + DAY);
  const held = [guess - before, guess - after].filter(
    (c, i) => offsetAt(zone, c) === (i === 0 ? before : after),
  );
  return held.length > 0 ? Math.min(...held) : guess - before;
}
