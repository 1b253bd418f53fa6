import type { Materialised } from '../materialise.js';
import { answersRequest, type PlanAnswer } from '../refCells.js';
import type { Batch } from './batch.js';

/**
 * Step 6, plan requests: a site's open request is answered by a run that started after it, or, when
 * the plan came out the same as before, by the cell's confirmation (an agent sends no new run for an
 * unchanged plan). Run start times are agent times, corrected by `offsetMs` (T2).
 */
export async function answerRequests(
  b: Batch,
  site: string,
  m: Pick<Materialised, 'runs' | 'cells'>,
  offsetMs: number,
): Promise<void> {
  const answer = async (a: PlanAnswer, runId: string) => {
    let open = b.openRequests.get(site);
    if (!open) {
      open = await b.store.listPlanRequests({ site, open: true });
      b.openRequests.set(site, open);
    }
    for (const req of open) {
      if (b.doneRequests.has(req.requestId) || !answersRequest(req, a)) continue;
      b.doneRequests.set(req.requestId, { ...req, state: 'done', doneAt: b.now, runId });
    }
  };
  for (const run of m.runs)
    await answer({ ...run, at: Date.parse(run.summary.startedAt) - offsetMs }, run.runId);
  for (const cell of m.cells) await answer({ ...cell, at: cell.plannedAt }, cell.runId);
}
