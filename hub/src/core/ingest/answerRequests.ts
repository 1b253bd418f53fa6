import type { PlanRequestRow } from '../../ports/HubStore.js';
import type { Materialised } from '../materialise.js';
import { answersRequest, type PlanAnswer } from '../refCells.js';
import type { Batch } from './batch.js';
import { firstPossible, hubTime, openRequests } from './confirmations.js';

/**
 * Step 6, plan requests: a site's open request is answered by a run that started after it, or, when
 * the plan came out the same as before, by the cell's confirmation (an agent sends no new run for an
 * unchanged plan). Run start times are agent times, corrected by `offsetMs` (T2).
 *
 * For an agent that confirms what it receives (decision 230), the run must also have started, on the
 * agent's own clock, after the agent received the request: a scheduled run that merely came later is
 * not an answer, and a request the agent never received (a relay ate it) is never `done`. Its cell
 * confirmations answer nothing here: the agent's stamp does (decision 300).
 */
export async function answerRequests(
  b: Batch,
  site: string,
  m: Pick<Materialised, 'runs' | 'cells'>,
  offsetMs: number,
  agent?: string,
): Promise<void> {
  // Nothing to answer with (a segment of facts or receipts only): no read of the site's requests.
  if (m.runs.length === 0 && m.cells.length === 0) return;
  // Read once (the batch caches them): most segments meet a site with no open request.
  const open = await openRequests(b, site);
  if (open.length === 0) return;
  const confirms = agent !== undefined && b.agents.get(`${site}/${agent}`)?.confirmsRequests === true;
  const answer = (a: PlanAnswer, agentAt: number, runId: string, isRun: boolean) => {
    for (const req of open) {
      const cur = b.doneRequests.get(req.requestId) ?? req;
      if (cur.state === 'done' || !answersRequest(req, a)) continue;
      if (confirms && req.agent === agent && (!isRun || !receivedBefore(b, cur, agentAt))) continue;
      // A new run's start is when the request began running (the journey's step, decision 560).
      const floor = Math.max(firstPossible(cur), cur.deliveredAt ?? 0);
      const started = isRun && cur.startedAt == null ? { startedAt: hubTime(a.at, 0, floor, b.now) } : {};
      b.doneRequests.set(req.requestId, { ...cur, ...started, state: 'done', doneAt: b.now, runId });
    }
  };
  for (const run of m.runs) {
    const startedAt = Date.parse(run.summary.startedAt);
    answer({ ...run, at: startedAt - offsetMs }, startedAt, run.runId, true);
  }
  // The other cells are confirmations (the same plan again, no new run), known only by when they
  // finished: a plan under way when the request arrived could finish after it. An agent that confirms
  // stamps the request with the run it started for it (`recordConfirmations`, decision 300); only an
  // older agent's requests are answered by a confirmation's time. A cell whose run came in this
  // segment was judged by that run's start.
  const judged = new Set(m.runs.map((r) => r.runId));
  for (const cell of m.cells) {
    if (confirms && judged.has(cell.runId)) continue;
    answer({ ...cell, at: cell.plannedAt }, cell.plannedAt + offsetMs, cell.runId, false);
  }
}

/** Whether the agent says it received `req` no later than agent time `agentAt`. */
function receivedBefore(b: Batch, req: PlanRequestRow, agentAt: number): boolean {
  const at = req.agentReceivedAt ?? b.confirmations.get(req.requestId)?.receivedAt;
  return at != null && at <= agentAt;
}
