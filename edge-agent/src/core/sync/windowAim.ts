import {
  type ContactWindow,
  nextWindowOf,
  openWindowOf,
  parseWindows,
  type WindowSpec,
} from '@driftline/protocol';

/** Shortest wait between tries inside a window: a window of a few seconds is not a busy loop. */
const MIN_TRY_MS = 1000;

/**
 * The agent's own contact plan, read from `sync.contactWindows` (the same lines the hub judges the site
 * by: docs/decisions/260-contact-plans.md), and what it means for the sync loop's schedule
 * (docs/decisions/450-contact-the-agent-proves.md):
 *
 * - a wait never runs past the next window's opening: the agent syncs as a window opens;
 * - inside a window a wait is at most `min(backoffCap, window / 4)`: a window is never slept through;
 * - in a window the agent has not yet pushed anything in, a presence is due (the hub counts it as contact).
 *
 * Pure: times come in as arguments.
 */
export class WindowAim {
  private specs: WindowSpec[];

  constructor(
    windows: readonly string[],
    private readonly backoffCapMs: number,
  ) {
    this.specs = parseWindows(windows);
  }

  /** The plan is now `windows` (the hub declared or withdrew some: docs/decisions/590-windows-declared-once.md). */
  set(windows: readonly string[]): void {
    this.specs = parseWindows(windows);
  }

  /** The plan has a window the agent can aim at (free text alone has none). */
  get planned(): boolean {
    return this.specs.length > 0;
  }

  /** The window open at `now`, or null. */
  openAt(now: number): ContactWindow | null {
    return openWindowOf(this.specs, now);
  }

  /** The next window opening after `now` (strictly), or null. */
  nextAfter(now: number): ContactWindow | null {
    return nextWindowOf(this.specs, now);
  }

  /**
   * The wait the sync loop asked for, brought forward so it ends by the next window's opening and, in a
   * window, so the loop tries at least every `min(backoffCap, window / 4)` (never under a second).
   */
  wait(asked: number, now: number): number {
    if (!this.planned) return asked;
    let wait = asked;
    const open = this.openAt(now);
    if (open) wait = Math.min(wait, this.tryEveryMs(open));
    const next = this.nextAfter(now);
    if (next) wait = Math.min(wait, Math.max(0, next.start - now));
    return Math.max(0, wait);
  }

  /** How often the loop tries inside window `w`: `min(backoffCap, window / 4)`, never under a second. */
  tryEveryMs(w: { start: number; end: number }): number {
    return Math.max(MIN_TRY_MS, Math.min(this.backoffCapMs, (w.end - w.start) / 4));
  }

  /**
   * A presence is due: a window is open and nothing went up (no push taken by an upstream) since it opened.
   * `lastPushedAt` is the last push an upstream took, agent clock; null: none since start.
   */
  presenceDue(lastPushedAt: number | null, now: number): boolean {
    const open = this.openAt(now);
    return open !== null && (lastPushedAt === null || lastPushedAt < open.start);
  }
}
