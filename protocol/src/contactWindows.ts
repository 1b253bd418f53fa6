import { parseDuration } from './duration.js';
import { parseSchedule, type Schedule } from './schedule.js';
import { splitZone, zonedIsoMs } from './timeZone.js';

/**
 * Contact windows: when a site's link is expected up. One text format, declared by an agent
 * (`sync.contactWindows`), in the hub's site config (`contactPlans.sites`) or for a relay's upstream
 * (`upstreams[].contact.windows`), and written by the hub for a learned plan (docs/decisions/260-contact-plans.md). Each entry is one of:
 *
 * - `every <duration> for <duration> from <ISO 8601>`: a periodic pass (`every 4m for 40s from 2026-11-27T00:00:00Z`);
 * - `<cron> for <duration>`: five-field cron (minute hour day-of-month month day-of-week, UTC, read by
 *   `schedule.ts` with standard semantics), each match opens a window (`0 2 * * * for 30m`: a nightly VSAT
 *   slot); without `for` a window lasts one minute;
 * - `<ISO 8601> for <duration>`: one window (`2026-11-27T14:00:00Z for 8m`).
 *
 * Each may end with an IANA time zone, `tz Europe/Berlin` (docs/decisions/590-windows-declared-once.md):
 * a cron window is then read in that zone's local time, through its DST changes, as plan schedules read
 * theirs; an ISO time is then written without an offset (`2026-11-27T14:00 for 8m tz Europe/Berlin`).
 * An `every` period is exact elapsed time: for a window that keeps its local hour across DST, write cron.
 *
 * Durations are `90s`, `4m`, `1h30m`, `2d`, `500ms`. Anything else is free text: kept and shown, never judged.
 * Pure: no I/O; every search is bounded.
 */

export type WindowSpec =
  | { kind: 'every'; periodMs: number; durationMs: number; fromMs: number }
  | { kind: 'cron'; schedule: Schedule; durationMs: number }
  | { kind: 'once'; atMs: number; durationMs: number };

/** One window, `[start, end)` in epoch milliseconds. */
export interface ContactWindow {
  start: number;
  end: number;
}

const MIN = 60_000;
const DAY = 86_400_000;

/** 240_000 → `4m`, 5_400_000 → `1h30m`: the form `parseDuration` reads back. */
export function formatWindowDuration(ms: number): string {
  let rest = Math.max(1, Math.round(ms));
  const out: string[] = [];
  for (const [u, size] of [
    ['d', DAY],
    ['h', 3_600_000],
    ['m', MIN],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out.push(`${n}${u}`);
    rest -= n * size;
  }
  return out.join('');
}

const isoMs = (text: string): number | null => {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return null;
  const t = Date.parse(text);
  return Number.isFinite(t) ? t : null;
};

/** The three forms, said in every refusal. */
export const WINDOW_FORMS =
  "'every 4m for 40s from 2026-11-27T00:00:00Z', '0 2 * * * for 30m' (cron, UTC) or '2026-11-27T14:00:00Z for 8m', each optionally ending 'tz Europe/Berlin'";

/** One window entry, or why it is not one (the text is then free text, shown as written). */
export function parseWindow(text: string): { ok: true; value: WindowSpec } | { ok: false; error: string } {
  const t = text.trim().replace(/\s+/g, ' ');
  if (t.length > 200) return { ok: false, error: 'a contact window is at most 200 characters' };
  const zoned = splitZone(t);
  if (!zoned.ok) return { ok: false, error: `'${t}': ${zoned.error}` };
  const { body, zone } = zoned;
  const at = (iso: string): number | null => {
    if (zone === null) return isoMs(iso);
    return zonedIsoMs(iso, zone);
  };
  const every = /^every (\S+) for (\S+) from (\S+)$/.exec(body);
  if (every) {
    const periodMs = parseDuration(every[1] as string);
    const durationMs = parseDuration(every[2] as string);
    const fromMs = at(every[3] as string);
    if (periodMs === null || durationMs === null || fromMs === null)
      return {
        ok: false,
        error: `'${t}': write 'every 4m for 40s from 2026-11-27T00:00:00Z'${zone ? ` (with tz, the time without its offset: from 2026-11-27T00:00)` : ''}`,
      };
    if (durationMs > periodMs)
      return { ok: false, error: `'${t}': a window cannot last longer than its period` };
    return { ok: true, value: { kind: 'every', periodMs, durationMs, fromMs } };
  }
  const [head, forText] = body.split(' for ') as [string, string | undefined];
  const durationMs = forText === undefined ? MIN : parseDuration(forText);
  if (durationMs === null)
    return { ok: false, error: `'${t}': '${forText}' is not a duration (90s, 4m, 1h30m)` };
  const once = at(head);
  if (once !== null) return { ok: true, value: { kind: 'once', atMs: once, durationMs } };
  if (zone !== null && isoMs(head) !== null)
    return {
      ok: false,
      error: `'${t}': with tz, write the time without its offset (2026-11-27T14:00 for 8m tz ${zone})`,
    };
  if (head.split(' ').length !== 5 || !/^[\d*]/.test(head))
    return {
      ok: false,
      error: `'${t}' is not 'every … for … from …', '<cron> for …' or '<ISO time> for …' (each may end 'tz Europe/Berlin')`,
    };
  const cron = parseSchedule(head, zone ? { timezone: zone } : {});
  if (!cron.ok) return { ok: false, error: `'${t}': ${cron.error.replace(/^cron '[^']*'( in \S+)?: /, '')}` };
  return { ok: true, value: { kind: 'cron', schedule: cron.value, durationMs } };
}

/** The entries that parse; the rest are free text. */
export function parseWindows(texts: readonly string[]): WindowSpec[] {
  const out: WindowSpec[] = [];
  for (const t of texts) {
    const r = parseWindow(t);
    if (r.ok) out.push(r.value);
  }
  return out;
}

/** The first window of `spec` that starts after `t` (strictly), or null. */
export function windowAfter(spec: WindowSpec, t: number): ContactWindow | null {
  const w = (start: number | null) => (start === null ? null : { start, end: start + spec.durationMs });
  switch (spec.kind) {
    case 'once':
      return spec.atMs > t ? w(spec.atMs) : null;
    case 'every': {
      const k = Math.floor((t - spec.fromMs) / spec.periodMs) + 1;
      return w(spec.fromMs + Math.max(0, k) * spec.periodMs);
    }
    case 'cron':
      return w(spec.schedule.nextAfter(t));
  }
}

/** The last window of `spec` that starts at or before `t`, or null. */
export function windowAtOrBefore(spec: WindowSpec, t: number): ContactWindow | null {
  const w = (start: number | null) => (start === null ? null : { start, end: start + spec.durationMs });
  switch (spec.kind) {
    case 'once':
      return spec.atMs <= t ? w(spec.atMs) : null;
    case 'every':
      return t < spec.fromMs
        ? null
        : w(spec.fromMs + Math.floor((t - spec.fromMs) / spec.periodMs) * spec.periodMs);
    case 'cron':
      return w(spec.schedule.latestAtOrBefore(t));
  }
}

/** The earliest window of any spec starting after `t`. */
export function nextWindowOf(specs: readonly WindowSpec[], t: number): ContactWindow | null {
  let best: ContactWindow | null = null;
  for (const s of specs) {
    const w = windowAfter(s, t);
    if (w && (!best || w.start < best.start)) best = w;
  }
  return best;
}

/** The latest window of any spec starting at or before `t` (open now, or the last one). */
export function lastWindowOf(specs: readonly WindowSpec[], t: number): ContactWindow | null {
  let best: ContactWindow | null = null;
  for (const s of specs) {
    const w = windowAtOrBefore(s, t);
    if (w && (!best || w.start > best.start)) best = w;
  }
  return best;
}

/**
 * The window open at `t`, or null: of every spec's latest window starting at or before `t`, the first
 * still open (two specs' windows may overlap: a shorter, later one can have ended inside a longer one).
 * The one rule the agent's aim, the relay's forwarding and the hub's judgement use.
 */
export function openWindowOf(specs: readonly WindowSpec[], t: number): ContactWindow | null {
  for (const s of specs) {
    const w = windowAtOrBefore(s, t);
    if (w && w.start <= t && t < w.end) return w;
  }
  return null;
}
