import { type CronSpec, cronMatches } from './cron.js';

const MIN = 60_000;

/** A window opens at every minute the cron matches and stays open `durationMinutes`. */
export interface ContactWindow {
  cron: CronSpec;
  durationMinutes: number;
}

/** When an uplink is expected up, and how many bytes it may carry. No windows = always open. */
export interface ContactPlan {
  windows: ContactWindow[];
  bytesPerWindow?: number;
  bytesPerDay?: number;
}

export type ContactState =
  | { open: true; windowKey: string; dayKey: string }
  | { open: false; opensAt: number | null };

const dayKey = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Whether `now` is inside a window. Looks back at most one window length and forward at most
 * `lookaheadMinutes` (bounded work: one cron check per minute).
 */
export function contactState(plan: ContactPlan, now: number, lookaheadMinutes = 24 * 60): ContactState {
  if (plan.windows.length === 0) return { open: true, windowKey: 'always', dayKey: dayKey(now) };
  const minute = Math.floor(now / MIN) * MIN;
  for (const w of plan.windows) {
    for (let back = 0; back < w.durationMinutes; back++) {
      const start = minute - back * MIN;
      if (cronMatches(w.cron, start)) return { open: true, windowKey: String(start), dayKey: dayKey(now) };
    }
  }
  for (let ahead = 1; ahead <= lookaheadMinutes; ahead++) {
    const t = minute + ahead * MIN;
    if (plan.windows.some((w) => cronMatches(w.cron, t))) return { open: false, opensAt: t };
  }
  return { open: false, opensAt: null };
}

/** Bytes the uplink may still send now, given what was sent in this window and today. */
export function budgetLeft(plan: ContactPlan, sentInWindow: number, sentToday: number): number {
  const limits = [
    plan.bytesPerWindow === undefined ? Number.POSITIVE_INFINITY : plan.bytesPerWindow - sentInWindow,
    plan.bytesPerDay === undefined ? Number.POSITIVE_INFINITY : plan.bytesPerDay - sentToday,
  ];
  return Math.max(0, Math.min(...limits));
}
