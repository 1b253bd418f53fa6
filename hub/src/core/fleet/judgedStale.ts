import { isPlanStale, type SiteContact } from '@driftline/protocol';
import type { CellCount, CellRow, ReadStore } from '../../ports/HubStore.js';
import { baseKind } from './cellColumns.js';
import { CountRows } from './counted.js';

/** The most cells one site's re-judgement reads (a site holds a few hundred). */
const SITE_CELLS_CAP = 5000;

/**
 * When a site's cells are judged stale: at its last contact plus the grace where its contact plan judges
 * its silence (protocol's `cellAgainstContact`, as the matrix shows its cells: silence between windows
 * ages nothing, docs/decisions/260-contact-plans.md); null where that is now, and the read model's flag
 * (judged at now by the sweeper, decision 400) is already right.
 */
export function judgedAt(
  contact: SiteContact | null,
  lastContactAt: number | null,
  now: number,
): number | null {
  if (!contact?.judged || contact.state === 'unplanned' || lastContactAt === null) return null;
  const heard = lastContactAt + contact.graceS * 1000;
  return heard < now ? heard : null;
}

/**
 * One site's count rows with staleness judged at `at` instead of now: every row's cells counted fresh,
 * then the cells whose plan was already stale at `at` (one bounded read of the site's stale cells) moved
 * back to stale, so totals, per-environment counts and attention kinds agree with the site's matrix.
 * `keyOf` gives a row's key from a cell (the site, or `site/environment`).
 */
export async function countsJudgedAt(
  store: Pick<ReadStore, 'pageCells'>,
  site: string,
  at: number,
  rows: readonly CellCount[],
  keyOf: (c: CellRow) => string,
): Promise<CellCount[]> {
  const out = new CountRows();
  for (const r of rows) out.add(r.key, r.status, r.kind, false, r.n);
  // Stale by the flag or by a deadline before `at`: a superset of the cells stale at `at`, kept by the rule.
  const stale = await store.pageCells({ site, stale: true, now: at, limit: SITE_CELLS_CAP });
  for (const c of stale) {
    if (!isPlanStale(c.plannedAt, c.expectedIntervalS, at)) continue;
    const key = keyOf(c);
    const kind = baseKind(c);
    if (out.take(key, c.status, kind, false) !== null) out.add(key, c.status, kind, true, 1);
  }
  return out.rows();
}
