import { refusesRequest } from '@driftline/hop/client';
import { BLOB_LOST, type BlobUploader } from '../ports/BlobUploader.js';
import type { Custody } from '../ports/Custody.js';
import type { ForwardEvent } from './Forwarder.js';
import {
  type BackoffOptions,
  slotFailed,
  slotState,
  slotSucceeded,
  type UpstreamSlot,
} from './upstreamSlot.js';

export interface BlobForwarderDeps {
  custody: Pick<Custody, 'blobs'>;
  slots: UpstreamSlot[];
  uploader: BlobUploader;
  opts: BackoffOptions;
  now: () => number;
  random: () => number;
  emit: (e: ForwardEvent) => void;
  /** Deletes a blob's file once it has left custody. */
  removeFile: (path: string) => Promise<void>;
}

/** How long a blob an upstream refused for good waits before that upstream is asked again (its limit may change). */
export const BLOB_ASIDE_MS = 3_600_000;

/**
 * One blob upstream: the oldest pending blob goes to the first upstream that is ready (out of backoff,
 * inside a contact window: the same rules and the same backoff as bundles). The upload resumes from a
 * URL kept in custody; the blob leaves custody once the upstream has it. A blob the upstream refuses for
 * good (too large, bad metadata) is set aside for that upstream for {@link BLOB_ASIDE_MS} instead of
 * blocking every blob behind it. Answers whether it did something (sent one or set one aside).
 */
export async function forwardBlob(d: BlobForwarderDeps): Promise<boolean> {
  for (const slot of d.slots) {
    if (!slotState(slot, d.now()).ready) continue;
    const [blob] = d.custody.blobs.pending(slot.upstream.name, 1, d.now());
    // Nothing for this upstream (what is left may be set aside for it only): the next may take it.
    if (!blob) continue;
    const r = await d.uploader.upload(slot.upstream.name, blob, (url) =>
      d.custody.blobs.setUploadUrl(blob.sha256, slot.upstream.name, url),
    );
    if (r.ok) {
      slotSucceeded(slot);
      // Custody passes on: the file goes once the upstream has it (unless a cached publication shares it).
      const file = d.custody.blobs.forwarded(blob.sha256);
      if (file) await d.removeFile(file);
      d.emit({ type: 'blob-forwarded', upstream: slot.upstream.name, sha256: blob.sha256, bytes: blob.size });
      return true;
    }
    if (r.code === BLOB_LOST) {
      // Its file is gone (deleted, a lost disk): holding the row would block the blobs behind it forever.
      d.custody.blobs.lost(blob.sha256);
      d.emit({ type: 'blob-lost', upstream: slot.upstream.name, sha256: blob.sha256, reason: r.message });
      return true;
    }
    if (refusesRequest(r)) {
      const retryAt = d.now() + BLOB_ASIDE_MS;
      d.custody.blobs.setAside(blob.sha256, slot.upstream.name, retryAt, r.message);
      const { code, message: reason } = r;
      d.emit({
        type: 'blob-set-aside',
        upstream: slot.upstream.name,
        sha256: blob.sha256,
        code,
        reason,
        retryAt,
      });
      return true;
    }
    const delay = slotFailed(slot, d.now(), d.opts, d.random);
    const { code, message: reason, retryable } = r;
    d.emit({ type: 'failed', upstream: slot.upstream.name, code, reason, retryable, retryInMs: delay });
  }
  return false;
}
