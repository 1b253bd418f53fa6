import type { DocApply } from '@driftline/protocol';

/** One approval counted towards a run's quorum (kept at the site only). */
export interface CountedApproval {
  approvalId: string;
  approver: string;
  approvedAt: number;
  expiresAt: number;
}

/** Where the approvals of one run stand: what the document shows, and what the agent keeps besides. */
export interface ApplyRecord {
  apply: DocApply;
  /** Approvals counted so far, kept even while the run is refused: a later approval may still count them. */
  counted: CountedApproval[];
  /** The plan file hash the approvals named. */
  planFileSha256?: string;
}

/** What approval handling needs of the agent's store. */
export interface ApplyStore {
  /** The record of `runId`'s approvals, if any arrived. */
  applyRecord(runId: string): ApplyRecord | undefined;
  /** Records `rec` durably and writes `rec.apply` into the document's `applies` (it travels to the hub). */
  setApply(rec: ApplyRecord): void;
  /** Records in `state`, oldest first. */
  appliesIn(state: DocApply['state']): ApplyRecord[];
  /** The first run of the cell after `runId` that found a different plan (a confirmation is not one). */
  laterRun(
    environment: string,
    component: string,
    cellRef: string | undefined,
    runId: string,
  ): string | undefined;
}
