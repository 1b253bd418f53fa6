import type { MatrixCell } from '@driftline/protocol';

/**
 * A cell is stale once its plan is older than twice its expected interval (one missed plan is noise, two are a fact). The hub says so
 * when it answers; the dashboard keeps checking as time passes without a new answer.
 */
export function isStale(cell: MatrixCell, nowMs: number): boolean {
  if (cell.stale) return true;
  // Judged against its site's contact plan (core/contact.ts): silence between windows ages nothing.
  if (cell.contact) return false;
  if (!cell.plannedAt || !cell.expectedIntervalS) return false;
  return nowMs - Date.parse(cell.plannedAt) > 2 * cell.expectedIntervalS * 1000;
}
