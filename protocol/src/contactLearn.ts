import { formatWindowDuration } from './contactWindows.js';

/**
 * Learned contact windows: where a site declares none, its observed contact history predicts the next
 * window (a polar satellite's pass, a nightly VSAT slot). docs/decisions/260-contact-plans.md says how and
 * how far to trust it. Pure and bounded: the history is capped by the caller, the work is linear in it
 * (after one sort).
 */
export interface LearnedPlan {
  /** The plan in the declared format (`every 4m for 40s from …`), so one judge reads both. */
  window: string;
  periodMs: number;
  durationMs: number;
  /** The start of the latest observed window, the plan's anchor. */
  anchorMs: number;
  /**
   * 0…1: the share of gaps between observed windows that are whole periods, times the share of the
   * periods they span that had a window, times how many fit (five or more: 1), times how tightly.
   */
  confidence: number;
  /** Windows observed (contact sessions) in the history. */
  windowsSeen: number;
}

export interface LearnOptions {
  /** A silence longer than this ends a contact session (a window). */
  silenceMs: number;
  /** A gap fits a period when within this share of it (default 0.1). */
  tolerance?: number;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** Contact sessions: runs of contacts with no silence longer than `silenceMs` between them. */
export function contactSessions(
  contacts: readonly number[],
  silenceMs: number,
): { start: number; end: number }[] {
  const sorted = [...contacts].sort((a, b) => a - b);
  const out: { start: number; end: number }[] = [];
  for (const t of sorted) {
    const cur = out[out.length - 1];
    if (cur && t - cur.end <= silenceMs) cur.end = t;
    else out.push({ start: t, end: t });
  }
  return out;
}

/**
 * The period of the contact sessions' starts, or null with fewer than three sessions or no period that
 * fits half the gaps. Gaps may span missed windows (whole multiples of the period).
 */
export function learnContactPlan(contacts: readonly number[], opts: LearnOptions): LearnedPlan | null {
  const sessions = contactSessions(contacts, opts.silenceMs);
  if (sessions.length < 3) return null;
  const gaps: number[] = [];
  for (let i = 1; i < sessions.length; i++)
    gaps.push((sessions[i] as { start: number }).start - (sessions[i - 1] as { start: number }).start);
  // The smallest gap that a fair share of the others are near multiples of: the median unless windows
  // were missed often, then a shorter gap explains more of them.
  const tol = opts.tolerance ?? 0.1;
  let best: { p: number; fit: number; m: number; score: number; resid: number } | null = null;
  for (const candidate of [median(gaps), Math.min(...gaps)]) {
    let fit = 0;
    let m = 0;
    let sum = 0;
    for (const g of gaps) {
      const k = Math.round(g / candidate);
      if (k >= 1 && Math.abs(g - k * candidate) <= tol * candidate) {
        fit++;
        m += k;
        sum += g;
      }
    }
    if (fit === 0) continue;
    const p = sum / m;
    let resid = 0;
    for (const g of gaps) {
      const k = Math.round(g / p);
      if (k >= 1 && Math.abs(g - k * p) <= tol * p) resid += Math.abs(g - k * p);
    }
    // A short period explains any gaps as many missed windows: score by the windows it says were kept.
    const score = (fit / gaps.length) * (fit / m);
    if (!best || score > best.score) best = { p, fit, m, score, resid: resid / fit };
  }
  if (!best || best.fit * 2 < gaps.length) return null;
  // Whole seconds past ten seconds: the plan is read by people, and the contacts' timing is no finer.
  const round = (ms: number) => (ms >= 10_000 ? Math.round(ms / 1000) * 1000 : Math.round(ms));
  const periodMs = round(best.p);
  const durationMs = Math.min(periodMs, Math.max(1000, round(median(sessions.map((s) => s.end - s.start)))));
  const anchorMs = (sessions[sessions.length - 1] as { start: number }).start;
  const confidence =
    Math.round(
      best.score * Math.min(1, best.fit / 5) * Math.max(0, 1 - best.resid / (tol * periodMs)) * 100,
    ) / 100;
  return {
    window: `every ${formatWindowDuration(periodMs)} for ${formatWindowDuration(durationMs)} from ${new Date(anchorMs).toISOString()}`,
    periodMs,
    durationMs,
    anchorMs,
    confidence,
    windowsSeen: sessions.length,
  };
}
