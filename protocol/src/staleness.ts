import type { MatrixCell } from './api.js';
import type { ContactState } from './contactJudge.js';

/**
 * Staleness, judged one way by the hub (answers, sweeper, webhooks) and the dashboard (as time passes
 * without a new answer): a cell is stale once its plan is older than {@link STALE_AFTER_INTERVALS} times
 * the cadence its agent declared (one missed plan is noise, two are a fact). Where the site's contact plan
 * judges it, its age is measured at the site's last contact (plus the grace), not now: silence between
 * windows ages nothing (docs/decisions/260-contact-plans.md). Pure.
 */
export const STALE_AFTER_INTERVALS = 2;

/** When a plan made at `plannedAtMs` turns stale, or null when no cadence is declared (never stale). */
export function staleAt(plannedAtMs: number, expectedIntervalS: number | null | undefined): number | null {
  if (!expectedIntervalS || expectedIntervalS <= 0) return null;
  return plannedAtMs + STALE_AFTER_INTERVALS * expectedIntervalS * 1000;
}

/** Whether a plan made at `plannedAtMs` is stale when judged at `atMs`. */
export function isPlanStale(
  plannedAtMs: number,
  expectedIntervalS: number | null | undefined,
  atMs: number,
): boolean {
  const at = staleAt(plannedAtMs, expectedIntervalS);
  return at !== null && atMs > at;
}

/** Where a site stands against its plan, as much of it as a cell needs. */
export interface CellPlanFacts {
  state: ContactState;
  nextWindowAt: string | null;
  graceS: number;
}

/**
 * A cell judged against its site's contact plan at `now`: it carries the site's contact state and next
 * window, reads unreachable only when the plan says so, and is stale only if its plan was already stale
 * when the site was last heard from (plus the grace). A cell of an unplanned site is returned as it is.
 */
export function cellAgainstContact(
  cell: MatrixCell,
  plan: CellPlanFacts,
  lastContactAt: number | null,
  now: number,
): MatrixCell {
  if (plan.state === 'unplanned') return cell;
  const heard = lastContactAt === null ? now : Math.min(now, lastContactAt + plan.graceS * 1000);
  return {
    ...cell,
    stale: cell.plannedAt !== null && isPlanStale(Date.parse(cell.plannedAt), cell.expectedIntervalS, heard),
    siteUnreachable: plan.state === 'unreachable',
    contact: plan.state,
    nextWindowAt: plan.nextWindowAt,
  };
}
