import type { CellStatus, FleetSite } from '@driftline/protocol';

/**
 * A site's number in a status column of the overview. The drift column counts what "Needs attention"
 * counts (`attentionCounts.drift`: a plan with changes that also found drift is drift, waived drift is
 * not), so the two never disagree; a hub from before `attentionCounts` gives the status count.
 */
export function siteCount(
  s: Pick<FleetSite, 'statusCounts' | 'attentionCounts'>,
  status: CellStatus,
): number {
  if (status === 'drift' && s.attentionCounts) return s.attentionCounts.drift ?? 0;
  return s.statusCounts[status] ?? 0;
}
