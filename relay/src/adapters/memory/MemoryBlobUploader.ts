import type { HopFailure } from '@driftline/hop/client';
import type { BlobUploader, PendingBlob } from '../../ports/BlobUploader.js';

/**
 * Blob uploads that go nowhere, for tests of what decides them (`forwardBlob`): each upload hands its
 * URL to `onUrl` first, as `TusBlobUploader` does (a new `http://<upstream>/v1/uploads/<sha256>`, or the
 * one it resumes), then fails with `failWith` when set or is recorded in `uploaded`. It reads no file.
 * An HTTP contract is not run for it: what tus does on the wire is hop's, tested there.
 */
export class MemoryBlobUploader implements BlobUploader {
  /** Uploads that succeeded, in order. */
  readonly uploaded: { upstream: string; sha256: string; resumed: boolean }[] = [];
  /** While set, every upload fails with it (after its URL was handed out, as a link cut mid-upload). */
  failWith: HopFailure | null = null;

  async upload(upstream: string, blob: PendingBlob, onUrl: (url: string) => void) {
    onUrl(blob.url ?? `http://${upstream}/v1/uploads/${blob.sha256}`);
    if (this.failWith) return this.failWith;
    this.uploaded.push({ upstream, sha256: blob.sha256, resumed: blob.url !== null });
    return { ok: true as const };
  }
}
