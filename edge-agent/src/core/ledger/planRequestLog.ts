import type { ControlPayload } from '@driftline/protocol';
import type { AgentWriteSet, SyncStorage } from '../../ports/AgentStorage.js';
import { type AgentAutomergeDoc, writePlanRequest } from '../doc/agentDoc.js';
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
