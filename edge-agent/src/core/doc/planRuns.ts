import { cellKey, type DocCell, type DocRun, isUnchangedPlan } from '@driftline/protocol';
import type { PlanDone } from './requestStamps.js';
import type { RunInput } from './runInput.js';

/**
 * What a batch of runs does to the cells, decided before the document is touched: which runs only
 * confirm their cell (an unchanged plan) and the cell each leaves. Deciding first lets the ledger hold a
 * batch out of the document (docs/decisions/370-one-change-per-push.md).
 */
export interface PlannedRun {
  input: RunInput;
  key: string;
  /** The plan equals the cell's: a confirmation, no run entry. */
  same: boolean;
  /** The cell as readers see it after this run. */
  cell: DocCell;
}

/**
 * Plans `inputs` in order over the cells `current` shows (a second run of one cell compares against the
 * first). A run whose plan equals the cell's only moves `plannedAt` and counts a confirmation; any other
 * replaces the cell.
 */
export function planRuns(
  inputs: readonly RunInput[],
  current: (key: string) => DocCell | undefined,
): PlannedRun[] {
  const written = new Map<string, DocCell>();
  return inputs.map((input) => {
    const key = cellKey(input.summary.environment, input.summary.component, input.cellRef);
    const cell = written.has(key) ? written.get(key) : current(key);
    const same =
      isUnchangedPlan(cell, input.summary) && (!input.mayConfirm || !cell || input.mayConfirm(cell.runId));
    const next = same && cell ? confirmed(cell, input) : replaced(input);
    written.set(key, next);
    return { input, key, same, cell: next };
  });
}

/** What a planned run offers open plan requests as their answer (`stampRequests`). */
export function planDone(p: PlannedRun): PlanDone {
  const s = p.input.summary;
  return {
    environment: s.environment,
    component: s.component,
    cellRef: p.input.cellRef,
    ref: s.ref,
    commit: s.git?.commit,
    startedAt: Date.parse(s.startedAt),
    finishedAt: Date.parse(s.finishedAt),
    runId: p.cell.runId,
  };
}

function confirmed(current: DocCell, input: RunInput): DocCell {
  return {
    ...current,
    unchangedSince: current.unchangedSince ?? current.plannedAt,
    plannedAt: Date.parse(input.summary.finishedAt),
    confirmations: current.confirmations + 1,
    // Another commit can plan the same: the cell says which commit was planned last (a ref gate asks).
    ...(input.summary.git?.commit ? { commit: input.summary.git.commit } : {}),
  };
}

export function docRun(input: RunInput): DocRun {
  const { resources: _omit, ...summary } = input.summary;
  return {
    runId: input.runId as DocRun['runId'],
    environment: input.summary.environment,
    component: input.summary.component,
    summary,
    ref: input.summary.ref,
    detailBlob: input.detailBlob as DocRun['detailBlob'],
    recordedAt: input.recordedAt,
  };
}

function replaced(input: RunInput): DocCell {
  return {
    environment: input.summary.environment,
    component: input.summary.component,
    runId: input.runId as DocRun['runId'],
    status: input.summary.status,
    ref: input.summary.ref,
    commit: input.summary.git?.commit,
    needs: input.summary.needs,
    counts: input.summary.counts,
    reason: input.summary.reason,
    planHash: input.summary.planHash,
    plannedAt: Date.parse(input.summary.finishedAt),
    confirmations: 0,
    lockedStreak: input.lockedStreak || undefined,
  };
}
