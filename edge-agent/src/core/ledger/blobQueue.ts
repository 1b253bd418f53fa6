import type { ControlPayload } from '@driftline/protocol';
import type { AgentStorage, AgentWriteSet } from '../../ports/AgentStorage.js';
import type { BlobToUpload } from '../../ports/Uplink.js';

/**
 * The blob queue (detail blobs held until an upstream took them by tus and the hub acknowledged them)
 * and the plan-request log (a hub plan request is acted on once: the downlink is at-least-once).
 */

/** Blobs held that no upstream has taken yet, oldest first. */
export function blobsToUpload(storage: AgentStorage, limit: number): BlobToUpload[] {
  return storage.blobsToUpload(limit).map((b) => ({
    sha256: b.sha256,
    size: b.size,
    contentType: b.contentType,
    runId: b.runId ?? undefined,
    data: b.data as Uint8Array,
  }));
}

/** The write recording a plan request, or null when its id was seen before. */
export function planRequestWrites(
  storage: AgentStorage,
  req: Extract<ControlPayload, { type: 'plan-request' }>,
  state: 'accepted' | 'refused' | 'expired',
  detail: string | null,
  now: number,
): AgentWriteSet | null {
  if (storage.planRequest(req.requestId)) return null;
  return {
    planRequests: [
      {
        requestId: req.requestId,
        environment: req.environment,
        component: req.component,
        receivedAt: now,
        state,
        detail,
      },
    ],
  };
}
