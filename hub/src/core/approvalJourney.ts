import type { ApprovalJourney } from '@driftline/protocol';
import type { ApplyRow, ApprovalRow, ApproverRow } from '../ports/HubStore.js';

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

/**
 * One approval's journey (`GET /api/approvals`): submitted at the hub → delivered (a relay or the agent
 * pulled it from the downlink) → the agent's record of the approved run. The record is per run, so it
 * speaks for this approval once the agent counted it, or once the approval was delivered (a refusal
 * need not count the approval it refuses).
 */
export function toJourney(
  a: ApprovalRow,
  apply: ApplyRow | undefined,
  approvers: readonly ApproverRow[],
): ApprovalJourney {
  const agentSpeaks = apply && (apply.approvalIds.includes(a.approvalId) || a.deliveredAt !== null);
  const state: ApprovalJourney['state'] = agentSpeaks
    ? apply.state
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
    reason: agentSpeaks ? (apply.reason ?? apply.errorExcerpt) : null,
    receivedAt: agentSpeaks ? iso(apply.receivedAt) : null,
    startedAt: agentSpeaks ? iso(apply.startedAt) : null,
    finishedAt: agentSpeaks ? iso(apply.finishedAt) : null,
    nextRunId: agentSpeaks ? apply.nextRunId : null,
  };
}
