import { isPlanStale, type MatrixCell } from '@driftline/protocol';

/**
 * A cell is stale by protocol's rule (staleness.ts), the hub's. The hub says so
 * when it answers; the dashboard keeps checking as time passes without a new answer.
 */
export function isStale(cell: MatrixCell, nowMs: number): boolean {
  if (cell.stale) return true;
  // Judged against its site's contact plan (core/contact.ts): silence between windows ages nothing.
  if (cell.contact) return false;
  return cell.plannedAt !== null && isPlanStale(Date.parse(cell.plannedAt), cell.expectedIntervalS, nowMs);
}
