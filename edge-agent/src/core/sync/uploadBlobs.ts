import type { Ledger } from '../../ports/Ledger.js';
import type { Logger } from '../../ports/Logger.js';
import type { Uplink } from '../../ports/Uplink.js';

/** What uploading blobs needs: the ports themselves (SyncEngine's `SyncDeps` has them all). */
export interface UploadDeps {
  store: Ledger;
  /** Upstreams in order of preference. */
  uplinks: readonly Uplink[];
  log: Logger;
}

/** Uploads detail blobs the upstream does not hold yet, lowest priority (SyncEngine's last step). */
export async function uploadBlobsOnce(
  deps: UploadDeps,
  onProgress?: (sha256: string, sent: number, total: number) => void,
  signal?: AbortSignal,
  /** Asked before each blob: true when a result waits to be pushed first, and the uploads stop. */
  yieldToResults?: () => boolean,
): Promise<number> {
  let done = 0;
  // upstreams that sat on custody go last, as for pushes (docs/decisions/575-custody-deadline-per-path.md)
  const sat = new Set(deps.store.sitters().map((s) => s.upstream));
  const uplinks =
    sat.size === 0
      ? deps.uplinks
      : [...deps.uplinks.filter((u) => !sat.has(u.url)), ...deps.uplinks.filter((u) => sat.has(u.url))];
  for (const blob of deps.store.blobsToUpload()) {
    if (signal?.aborted || yieldToResults?.()) break;
    if (blob.previousUpload) {
      const { upstream, at } = blob.previousUpload;
      deps.log.warn(
        { upstream, sha256: blob.sha256, runId: blob.runId, uploadedAt: new Date(at).toISOString() },
        'detail blob uploaded again: no hub receipt since the upstream took it (that hop may have lost or faked it)',
      );
    }
    for (const up of uplinks) {
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
