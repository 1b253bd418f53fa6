import { cellKey } from '@driftline/protocol';
import type { CellRow } from '../../ports/HubStore.js';
import { type Materialised, replacesCell } from '../materialise.js';
import { webhookRows } from '../webhooks.js';
import { type Batch, batchCellKey } from './batch.js';

/** The lock a `stuck-lock` cell's run names, when this batch carries that run (decision 555). */
function stuckLockId(b: Batch, row: CellRow): string | undefined {
  if (row.status !== 'failed' || row.reason !== 'stuck-lock') return undefined;
  return b.w.runs.find((r) => r.runId === row.runId)?.summary.lock?.id;
}

/**
 * Step 5, cells and history: each cell row a document segment produced replaces the hub's current one
 * when `replacesCell` says so. A default-ref cell that changes also gets a history row (the
 * point-in-time matrix) and the webhooks its change calls for; `@ref` cells get neither.
 */
export async function recordCells(
  b: Batch,
  site: string,
  cells: Materialised['cells'],
  touchedCellKeys: ReadonlySet<string>,
  webhookUrls: readonly string[],
): Promise<void> {
  await b.prefetchCells(site, cells);
  for (const next of cells) {
    const cellTouched = touchedCellKeys.has(cellKey(next.environment, next.component, next.atRef));
    const prev = await b.cell(site, next.environment, next.component, next.atRef);
    if (!replacesCell(prev, next, cellTouched)) continue;
    const row: CellRow = {
      ...next,
      plannedAt: prev && !cellTouched ? prev.plannedAt : next.plannedAt,
      staleNotifiedFor: prev?.staleNotifiedFor ?? null,
    };
    // A segment without the cell's run (a cadence change) keeps what that run said of its checks.
    if (row.checksFailed === undefined && prev?.runId === row.runId && prev.checksFailed != null)
      row.checksFailed = prev.checksFailed;
    const k = batchCellKey(site, next.environment, next.component, next.atRef);
    b.cells.set(k, row);
    b.changedCells.set(k, row);
    if (row.atRef) continue;
    const { staleNotifiedFor: _s, planHash: _p, ...hist } = row;
    b.w.history.push(hist);
    b.w.webhooks.push(...webhookRows(webhookUrls, prev, row, b.now, stuckLockId(b, row)));
  }
}
