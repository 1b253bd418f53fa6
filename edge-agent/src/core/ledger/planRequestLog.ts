import type { ControlPayload } from '@driftline/protocol';
import type { AgentWriteSet, SyncStorage } from '../../ports/AgentStorage.js';
import { type AgentAutomergeDoc, writePlanRequest, writeRequestStarts } from '../doc/agentDoc.js';
import type { CellRef } from '../schedule/CellScheduler.js';
import { planRequestWrites } from './blobQueue.js';

/**
 * A plan request recorded once: the log row (the downlink is at-least-once) and the document's
 * `requests` entry, the agent's signed word that it arrived, by which the hub counts it delivered
 * (docs/decisions/230-time-a-hop-cannot-forge.md). Null when its id was seen before.
 */
export function planRequestChange(
  storage: SyncStorage,
  doc: AgentAutomergeDoc,
  req: Extract<ControlPayload, { type: 'plan-request' }>,
  state: 'accepted' | 'refused' | 'expired',
  detail: string | null,
  now: number,
): { w: AgentWriteSet; next: AgentAutomergeDoc } | null {
  const w = planRequestWrites(storage, req, state, detail, now);
  const row = w?.planRequests?.[0];
  if (!w || !row) return null;
  return {
    w,
    next: writePlanRequest(doc, {
      ...row,
      ...(req.ref ? { ref: req.ref } : {}),
      ...(req.commit ? { commit: req.commit } : {}),
    }),
  };
}

/**
 * A plan of `cell` starting at `now`: the document's word that it started the open requests it will
 * answer (docs/decisions/560-plan-request-states.md), or null when none waits for it.
 */
export function planStartChange(
  doc: AgentAutomergeDoc,
  cell: CellRef,
  now: number,
): { next: AgentAutomergeDoc; requestIds: string[] } | null {
  const r = writeRequestStarts(doc, {
    environment: cell.environment,
    component: cell.component,
    ...(cell.ref ? { cellRef: cell.ref } : {}),
    ...(cell.commit ? { commit: cell.commit } : {}),
    startedAt: now,
  });
  return r ? { next: r.doc, requestIds: r.requestIds } : null;
}
