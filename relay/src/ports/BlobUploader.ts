import type { HopFailure } from '@driftline/hop/client';

/** A complete, verified blob waiting to go upstream. */
export interface PendingBlob {
  sha256: string;
  size: number;
  path: string;
  metadata: Record<string, string>;
  /** The tus URL of an upload begun earlier (maybe before a restart), to resume. */
  url: string | null;
}

/** Uploads blobs to an upstream, resumably (tus). */
export interface BlobUploader {
  upload(
    upstream: string,
    blob: PendingBlob,
    onUrl: (url: string) => void,
  ): Promise<{ ok: true } | HopFailure>;
}
