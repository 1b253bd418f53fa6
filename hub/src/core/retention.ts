import { isFailureStatus, type PlanStatus } from '@driftline/protocol';
import type { RetentionPolicy } from '../ports/HubStore.js';

/** A failure is kept past the run count (protocol's `FAILURE_STATUSES`). */
export const isFailure = isFailureStatus;

interface RunLike {
  runId: string;
  site: string;
  environment: string;
  component: string;
  status: PlanStatus;
  receivedAt: number;
  /** Runs of an `@ref` cell count apart from the default cell's. */
  atRef?: string | null;
}

/**
 * RunIds to delete under `policy`: per cell (an `@ref` cell apart from its default one), runs beyond the newest `maxRunsPerCell` or older than
 * `maxAgeMs` go, except failures younger than `failureMaxAgeMs` and the runs in `keep` (cells show them).
 */
export function pruneRuns(
  runs: readonly RunLike[],
  keep: ReadonlySet<string>,
  policy: RetentionPolicy,
  now: number,
): string[] {
  const byCell = new Map<string, RunLike[]>();
  for (const r of runs) {
    const k = `${r.site}\u0000${r.environment}\u0000${r.component}\u0000${r.atRef ?? ''}`;
    const list = byCell.get(k) ?? [];
    list.push(r);
    byCell.set(k, list);
  }
  const doomed: string[] = [];
  for (const list of byCell.values()) {
    list.sort((a, b) => (a.runId < b.runId ? 1 : -1));
    list.forEach((r, i) => {
      if (keep.has(r.runId)) return;
      const age = now - r.receivedAt;
      if (isFailure(r.status) && age <= policy.failureMaxAgeMs) return;
      if (i >= policy.maxRunsPerCell || age > policy.maxAgeMs) doomed.push(r.runId);
    });
  }
  return doomed;
}
