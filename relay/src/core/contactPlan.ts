import { nextWindowOf, openWindowOf, parseWindow, type WindowSpec } from '@driftline/protocol';

const DAY = 86_400_000;

/**
 * When an uplink is expected up, and how many bytes it may carry. No windows = always open. The windows
 * are protocol's contact windows (`0 *\/2 * * * for 10m`), the syntax the hub and the agent read too.
 */
export interface ContactPlan {
  windows: WindowSpec[];
  bytesPerWindow?: number;
  bytesPerDay?: number;
}

export type ContactState =
  | {
      open: true;
      windowKey: string;
      dayKey: string /** When the window closes; absent: no windows. */;
      closesAt?: number;
    }
  | { open: false; opensAt: number | null };

const dayKey = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Windows from their texts (`0 *\/2 * * * for 10m`); throws on one that does not parse (config is checked first). */
export function windowsOf(texts: readonly string[]): WindowSpec[] {
  return texts.map((t) => {
    const r = parseWindow(t);
    if (!r.ok) throw new Error(r.error);
    return r.value;
  });
}

/**
 * Whether `now` is inside a window (named by its start), else when the next one opens: null when none
 * opens within `lookaheadMs`.
 */
export function contactState(plan: ContactPlan, now: number, lookaheadMs = DAY): ContactState {
  if (plan.windows.length === 0) return { open: true, windowKey: 'always', dayKey: dayKey(now) };
  const w = openWindowOf(plan.windows, now);
  if (w) return { open: true, windowKey: String(w.start), dayKey: dayKey(now), closesAt: w.end };
  const next = nextWindowOf(plan.windows, now);
  return { open: false, opensAt: next && next.start - now <= lookaheadMs ? next.start : null };
}

/** Bytes the uplink may still send now, given what was sent in this window and today. */
export function budgetLeft(plan: ContactPlan, sentInWindow: number, sentToday: number): number {
  const limits = [
    plan.bytesPerWindow === undefined ? Number.POSITIVE_INFINITY : plan.bytesPerWindow - sentInWindow,
    plan.bytesPerDay === undefined ? Number.POSITIVE_INFINITY : plan.bytesPerDay - sentToday,
  ];
  return Math.max(0, Math.min(...limits));
}
