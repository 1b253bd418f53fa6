import type { BlobReader } from '@driftline/hop';

/**
 * Where verified blobs live: the adapter moves finished uploads in and reads them back. Adapters:
 * `FileBlobs` (the hub), `MemoryBlobFiles` (tests); both pass `runBlobFilesContract`.
 */
export interface BlobFiles extends BlobReader {
  /** Moves a finished upload into place; returns the stored path. */
  adopt(sha256: string, fromPath: string): Promise<string>;
  readAll(sha256: string): Promise<Uint8Array | null>;
}
