import type { SyncDeps } from './SyncEngine.js';

/** Uploads detail blobs the upstream does not hold yet, lowest priority (SyncEngine's last step). */
export async function uploadBlobsOnce(
  deps: Pick<SyncDeps, 'store' | 'uplinks' | 'log'>,
  onProgress?: (sha256: string, sent: number, total: number) => void,
  signal?: AbortSignal,
  /** Asked before each blob: true when a result waits to be pushed first, and the uploads stop. */
  yieldToResults?: () => boolean,
): Promise<number> {
  let done = 0;
  for (const blob of deps.store.blobsToUpload()) {
    if (signal?.aborted || yieldToResults?.()) break;
    if (blob.previousUpload) {
      const { upstream, at } = blob.previousUpload;
      deps.log.warn(
        { upstream, sha256: blob.sha256, runId: blob.runId, uploadedAt: new Date(at).toISOString() },
        'detail blob uploaded again: no hub receipt since the upstream took it (that hop may have lost or faked it)',
      );
    }
    for (const up of deps.uplinks) {
      const r = await up.uploadBlob(blob, (sent, total) => onProgress?.(blob.sha256, sent, total), signal);
      if (r.ok) {
        deps.store.markBlobUploaded(blob.sha256, up.url);
        done++;
        break;
      }
      deps.log.warn({ upstream: up.url, sha256: blob.sha256, error: r.error }, 'blob upload did not finish');
    }
  }
  return done;
}
