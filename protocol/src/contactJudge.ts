import {
  type ContactWindow,
  lastWindowOf,
  nextWindowOf,
  openWindowOf,
  type WindowSpec,
} from './contactWindows.js';

/**
 * Where a site stands against its contact plan (docs/decisions/260-contact-plans.md):
 * - `in-window`: a window is open now (contact expected, or under way);
 * - `waiting`: between windows, no window missed: silence is expected, nothing is stale for it;
 * - `overdue`: at least one window ended (plus the grace) with no contact since it opened;
 * - `unreachable`: `unreachableAfter` windows or more missed in a row;
 * - `unplanned`: no window known; the hub falls back to the expected contact interval.
 */
export const CONTACT_STATES = ['in-window', 'waiting', 'overdue', 'unreachable', 'unplanned'] as const;
export type ContactState = (typeof CONTACT_STATES)[number];

export interface ContactJudgement {
  state: ContactState;
  /** The next window to open (after now). */
  next: ContactWindow | null;
  /** The latest window that opened at or before now (the open one, or the last one). */
  last: ContactWindow | null;
  /** Windows ended (with the grace) since the last contact, without one; counted up to `missedCap`. */
  missed: number;
}

export interface JudgeOptions {
  /** How long after a window ends its contact may still arrive (sync interval, light time). */
  graceMs: number;
  /** Missed windows in a row after which the site is unreachable. */
  unreachableAfter: number;
  /** Bound on the windows counted (the work is bounded by it). Default 100. */
  missedCap?: number;
}

/**
 * Judges `lastContactAt` against the windows at `now`. A window counts as kept when contact arrived at
 * or after its start; one is missed once its end plus the grace has passed without that. A site never
 * heard from has missed nothing yet (enrolment alone promises no window).
 */
export function judgeContact(
  specs: readonly WindowSpec[],
  lastContactAt: number | null,
  now: number,
  opts: JudgeOptions,
): ContactJudgement {
  if (specs.length === 0) return { state: 'unplanned', next: null, last: null, missed: 0 };
  const next = nextWindowOf(specs, now);
  const last = lastWindowOf(specs, now);
  let missed = 0;
  if (lastContactAt !== null) {
    const cap = opts.missedCap ?? 100;
    let w = nextWindowOf(specs, lastContactAt);
    while (w && w.end + opts.graceMs <= now && missed < cap) {
      missed++;
      w = nextWindowOf(specs, w.start);
    }
  }
  const open = openWindowOf(specs, now) !== null;
  const state: ContactState =
    missed >= opts.unreachableAfter ? 'unreachable' : missed > 0 ? 'overdue' : open ? 'in-window' : 'waiting';
  return { state, next, last, missed };
}
