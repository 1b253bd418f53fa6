/** Relative times for people: "3 h ago", "40 min later". Pure; `now` is always passed in. */

const UNITS: ReadonlyArray<[limitS: number, divisorS: number, unit: string]> = [
  [60, 1, 's'],
  [3600, 60, 'min'],
  [86_400, 3600, 'h'],
  [86_400 * 60, 86_400, 'd'],
  [Number.POSITIVE_INFINITY, 86_400 * 30, 'mo'],
];

/** A duration in the largest unit that keeps it ≥ 1, rounded down: `45 s`, `3 h`, `12 d`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  for (const [limit, divisor, unit] of UNITS) {
    if (s < limit) return `${Math.floor(s / divisor)} ${unit}`;
  }
  return `${s} s`;
}

/** `3 h ago`; a time in the future (clock offset not yet estimated) reads `in 2 min`. */
export function formatAgo(iso: string, nowMs: number): string {
  const diff = nowMs - Date.parse(iso);
  // A few seconds either way is clock jitter between hub and browser, not a plan from the future.
  if (Math.abs(diff) < 5000) return 'just now';
  if (diff < 0) return `in ${formatDuration(-diff)}`;
  return `${formatDuration(diff)} ago`;
}

/** Transit lag between when a plan ran at the site and when the hub got it: `arrived 40 min later`. */
export function formatLag(plannedAt: string, receivedAt: string): string {
  const lag = Date.parse(receivedAt) - Date.parse(plannedAt);
  if (lag < 1000) return 'arrived at once';
  return `arrived ${formatDuration(lag)} later`;
}

/** Absolute time for the hover/focus title, in UTC so every reader at HQ and the sites agree. */
export function formatAbsolute(iso: string): string {
  return `${iso
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z')
    .replace(/Z$/, ' UTC')}`;
}

/** How often an age label must refresh to stay right: every 5 s under a minute, else every 30 s. */
export function refreshEveryMs(iso: string, nowMs: number): number {
  return nowMs - Date.parse(iso) < 60_000 ? 5000 : 30_000;
}

/** A clock offset for people: `+2.3 s ahead`, `1 min behind`. */
export function formatOffset(ms: number | null): string {
  if (ms === null) return 'unknown';
  if (Math.abs(ms) < 1000) return `${ms >= 0 ? '+' : '−'}${Math.abs(ms)} ms`;
  return `${formatDuration(Math.abs(ms))} ${ms >= 0 ? 'ahead' : 'behind'}`;
}
