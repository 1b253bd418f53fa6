import type { Schedule } from './settings.js';

/** Where in its period a schedule is at `elapsedMs` after the link started. */
function phase(s: Schedule, elapsedMs: number): number {
  return (((elapsedMs - s.offsetMs) % s.periodMs) + s.periodMs) % s.periodMs;
}

/** Whether the schedule has the link up at `elapsedMs` (no schedule: always up). */
export function scheduledUp(s: Schedule | null, elapsedMs: number): boolean {
  if (!s) return true;
  if (s.upMs <= 0) return false;
  if (s.upMs >= s.periodMs) return true;
  return phase(s, elapsedMs) < s.upMs;
}

/** Milliseconds from `elapsedMs` until the schedule next changes state (Infinity if it never does). */
export function msUntilChange(s: Schedule | null, elapsedMs: number): number {
  if (!s || s.upMs <= 0 || s.upMs >= s.periodMs) return Number.POSITIVE_INFINITY;
  const p = phase(s, elapsedMs);
  return p < s.upMs ? s.upMs - p : s.periodMs - p;
}

/** Human text for a schedule: "up 10m every 1h35m (offset 0s)". */
export function describeSchedule(s: Schedule | null): string {
  if (!s) return 'always up';
  return `up ${fmt(s.upMs)} every ${fmt(s.periodMs)} (offset ${fmt(s.offsetMs)})`;
}

function fmt(ms: number): string {
  if (ms > 0 && ms < 1000) return `${Math.round(ms)}ms`;
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return [h ? `${h}h` : '', m ? `${m}m` : '', s || (!h && !m) ? `${s}s` : ''].join('');
}
