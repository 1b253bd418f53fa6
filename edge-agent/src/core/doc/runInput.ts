import type { PlanSummary } from '@driftline/protocol';

/** One finished run as the document records it (agentDoc.ts writes it, planRuns.ts shapes its entries). */
export interface RunInput {
  runId: string;
  summary: PlanSummary;
  /** sha256 of the stored detail blob, when one was stored. */
  detailBlob?: string;
  recordedAt: number;
  /** Consecutive locked results for this cell, this one included. */
  lockedStreak?: number;
  /** A ref other than the component's default: the run's cell is `environment/component@ref`. */
  cellRef?: string;
  /** Whether a plan equal to the cell's may only confirm the cell's run (`RecordRunInput.mayConfirm`). */
  mayConfirm?: (runId: string) => boolean;
}
