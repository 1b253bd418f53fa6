import type { CellRow, PlanRequestRow, SiteRow, SweepMarks } from '../ports/HubStore.js';

/** The stored rows a sweep's marks are checked against (looked up inside the adapter's transaction). */
export interface StoredNow {
  request(requestId: string): PlanRequestRow | null;
  cell(site: string, environment: string, component: string): CellRow | null;
  site(site: string): SiteRow | null;
}

/**
 * The marks of a sweep still true against the stored rows, as the rows to write: the stored row with
 * only its mark field changed. A request answered meanwhile stays done; a cell that shows a newer run,
 * or a site heard from since, is left alone (its next sweep decides again).
 */
export function marksStillTrue(m: SweepMarks, now: StoredNow): SweepMarks {
  const expired: PlanRequestRow[] = [];
  for (const r of m.expired) {
    const cur = now.request(r.requestId);
    if (cur && (cur.state === 'pending' || cur.state === 'delivered'))
      expired.push({ ...cur, state: 'expired' });
  }
  const staleCells: CellRow[] = [];
  for (const c of m.staleCells) {
    const cur = now.cell(c.site, c.environment, c.component);
    if (cur && cur.runId === c.staleNotifiedFor && cur.staleNotifiedFor !== c.staleNotifiedFor)
      staleCells.push({ ...cur, staleNotifiedFor: c.staleNotifiedFor });
  }
  const sites: SiteRow[] = [];
  for (const s of m.sites) {
    const cur = now.site(s.site);
    if (
      cur &&
      cur.lastContactAt === s.unreachableNotifiedFor &&
      cur.unreachableNotifiedFor !== s.unreachableNotifiedFor
    )
      sites.push({ ...cur, unreachableNotifiedFor: s.unreachableNotifiedFor });
  }
  return { expired, staleCells, sites };
}
