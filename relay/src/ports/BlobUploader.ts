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

/**
 * The failure code of an upload whose file is gone from this relay's disk (deleted, a lost volume): no
 * upstream will ever get it from here, so custody lets it go (counted) and the agent, which keeps a blob
 * until the hub acknowledges it, uploads it again (docs/decisions/220-receipts-for-every-kind.md).
 */
export const BLOB_LOST = 'blob-lost';

/** Uploads blobs to an upstream, resumably (tus). */
export interface BlobUploader {
  upload(
    upstream: string,
    blob: PendingBlob,
    onUrl: (url: string) => void,
  ): Promise<{ ok: true } | HopFailure>;
}
