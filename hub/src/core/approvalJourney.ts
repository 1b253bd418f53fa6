import type { ApprovalJourney } from '@driftline/protocol';
import type { ApplyRow, ApprovalRow, ApproverRow } from '../ports/HubStore.js';
import { isUnconfirmed } from './confirmBy.js';

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

/**
 * One approval's journey (`GET /api/approvals`): submitted at the hub → delivered (the agent's record
 * names it, decision 300; for an older agent, a relay or the agent pulled it from the downlink) → what the agent recorded for this approval id (decision 250): refused
 * with its own reason (`applies.refused`), or counted, and then the state of the run it counts for. An
 * approval the agent has not named is `delivered`, whatever became of other approvals of its run.
 */
export function toJourney(
  a: ApprovalRow,
  apply: ApplyRow | undefined,
  approvers: readonly ApproverRow[],
  now?: number,
): ApprovalJourney {
  const refusal = apply?.refused?.find((x) => x.approvalId === a.approvalId);
  const counted = !refusal && apply?.approvalIds.includes(a.approvalId) ? apply : undefined;
  const state: ApprovalJourney['state'] = refusal
    ? 'refused'
    : counted
      ? counted.state
      : a.deliveredAt !== null
        ? 'delivered'
        : 'submitted';
  return {
    approvalId: a.approvalId,
    site: a.site as ApprovalJourney['site'],
    environment: a.environment,
    component: a.component,
    ref: a.ref,
    commit: a.commit,
    runId: a.runId,
    approver: a.approver,
    approverName: approvers.find((x) => x.key === a.approver)?.name ?? null,
    approvedAt: iso(a.approvedAt) as string,
    expiresAt: iso(a.expiresAt) as string,
    submittedAt: iso(a.submittedAt) as string,
    deliveredAt: iso(a.deliveredAt),
    state,
    reason: refusal ? refusal.reason : counted ? (counted.reason ?? counted.errorExcerpt) : null,
    receivedAt: refusal ? iso(refusal.at) : counted ? iso(counted.receivedAt) : null,
    startedAt: counted ? iso(counted.startedAt) : null,
    finishedAt: counted ? iso(counted.finishedAt) : null,
    nextRunId: counted ? counted.nextRunId : null,
    ...(a.confirmBy != null
      ? {
          confirmBy: iso(a.confirmBy) as string,
          unconfirmed: isUnconfirmed(a.confirmBy, a.deliveredAt !== null || state !== 'submitted', now ?? 0),
        }
      : {}),
  };
}
