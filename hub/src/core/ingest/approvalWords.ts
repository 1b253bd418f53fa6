import type { ApplyRow, ApprovalRow } from '../../ports/HubStore.js';
import type { Batch } from './batch.js';

/** Approval ids looked up per document change: an apply record names at most 50 counted and 20 refused. */
export const MAX_APPROVAL_WORDS = 500;

/**
 * Approvals the agent's apply records name (decision 300): for an agent that confirms what it receives,
 * that record, not a relay's pull, is delivery. Each approval not yet delivered gets `deliveredAt` at the
 * time the agent names (hub clock, never after now): a refusal's own time; for a counted approval, when
 * the record began if it is the first counted, else when the record last changed (the latest it can
 * have arrived). Written with the batch's commit.
 */
export async function recordApprovalWords(
  b: Batch,
  site: string,
  agent: string,
  rows: readonly ApplyRow[],
): Promise<void> {
  if (b.agents.get(`${site}/${agent}`)?.confirmsRequests !== true) return;
  const named = new Map<string, number>();
  for (const r of rows) {
    for (const x of r.refused ?? []) named.set(x.approvalId, x.at);
    r.approvalIds.forEach((id, i) => {
      if (!named.has(id)) named.set(id, i === 0 ? r.receivedAt : r.updatedAt);
    });
  }
  let n = 0;
  for (const [id, at] of named) {
    if (++n > MAX_APPROVAL_WORDS) break;
    if (b.approvals.has(id)) continue;
    const row: ApprovalRow | null = await b.store.getApproval(id);
    if (!row || row.site !== site || row.deliveredAt !== null) continue;
    b.approvals.set(id, { ...row, deliveredAt: Math.min(at, b.now) });
  }
}
