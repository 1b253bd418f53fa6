import type { AgentFacts, ControlPayload, RunId, Sha256 } from '@driftline/protocol';
import type { AgentWriteSet, BlobStorage, SyncStorage } from '../../ports/AgentStorage.js';
import type { BlobToUpload } from '../../ports/Uplink.js';

/**
 * The blob queue (detail blobs held until an upstream took them by tus and the hub acknowledged them)
 * and the plan-request log (a hub plan request is acted on once: the downlink is at-least-once).
 */

/**
 * Blobs to upload, oldest first: those no upstream has taken yet, and those an upstream took at or before
 * `uploadedBefore` that the hub has still not acknowledged. As for bundles (D4), only the hub's ack ends
 * the agent's custody: an upstream's tus completion is a receipt, and a hop that faked it or lost the
 * file after it is healed by the next upload (docs/decisions/220-receipts-for-every-kind.md).
 */
export function blobsToUpload(storage: BlobStorage, limit: number, uploadedBefore: number): BlobToUpload[] {
  return storage.blobsToUpload(limit, uploadedBefore).map((b) => ({
    sha256: b.sha256,
    size: b.size,
    contentType: b.contentType,
    runId: b.runId ?? undefined,
    data: b.data as Uint8Array,
    ...(b.uploadedAt !== null && b.uploadUpstream !== null
      ? { previousUpload: { at: b.uploadedAt, upstream: b.uploadUpstream } }
      : {}),
  }));
}

/** Every upload of a blob an upstream took before: `driftline_agent_blob_reuploads_total` (decision 412). */
export const REUPLOADS = 'driftline_agent_blob_reuploads_total';
/** Uploads of one blob after its first, the counter its next wait grows from. */
export const reuploadsOf = (sha256: string) => `blob-reuploads ${sha256}`;
/** The wait before the next upload of a blob still not acknowledged doubles up to this many times. */
export const MAX_REUPLOAD_DOUBLINGS = 4;

/**
 * Whether a blob an upstream took at `uploadedAt`, uploaded `again` times since, is due to go up once
 * more: `resendAfterMs` after its first upload, then twice, four times… that long, at most 16 times
 * (decision 412): a hop that fakes or loses uploads costs a bounded, shrinking share of the link.
 */
export function reuploadDue(uploadedAt: number, again: number, now: number, resendAfterMs: number): boolean {
  return now - uploadedAt >= resendAfterMs * 2 ** Math.min(again, MAX_REUPLOAD_DOUBLINGS);
}

/** The facts' `detailUploads`: blobs an upstream took that the hub has not acknowledged, oldest first. */
export function detailUploads(storage: BlobStorage): NonNullable<AgentFacts['detailUploads']> {
  return storage.awaitingReceipt(50).flatMap((b) =>
    b.runId && b.uploadUpstream && b.uploadedAt !== null
      ? [
          {
            runId: b.runId as RunId,
            sha256: b.sha256 as Sha256,
            upstream: b.uploadUpstream,
            uploadedAt: b.uploadedAt,
          },
        ]
      : [],
  );
}

/** The write recording a plan request, or null when its id was seen before. */
export function planRequestWrites(
  storage: Pick<SyncStorage, 'planRequest'>,
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
