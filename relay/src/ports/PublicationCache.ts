import type { HopFailure } from '@driftline/hop/client';

/** A blob announced by a `blob` manifest on the downlink, as the relay tracks it. */
export interface CachedPublication {
  sha256: string;
  size: number;
  name: string;
  sites: string[];
  /**
   * `fetching` (partial file on disk), `held` (verified, served), `refused` (over quota / bad hash),
   * `superseded` (no live publication needs it any more; removed with its files at the next sweep).
   */
  state: 'fetching' | 'held' | 'refused' | 'superseded';
  /** Bytes on disk: the resume offset while fetching. */
  fetched: number;
  expiresAt: number;
  reason: string | null;
}

/** A blob a `blob` manifest announced for one site. */
export interface AnnouncedBlob {
  sha256: string;
  size: number;
  name: string;
  site: string;
  expiresAt: number;
  /** The publication (the manifest's `bundleId`; absent on older manifests: then the blob is live until it expires). */
  publicationId?: string;
  /** Earlier publications (their ids) this one supersedes at `site`. */
  supersedes?: string[];
  /** The file itself, when the manifest carried it (decision 360): kept without a fetch, once it hashes. */
  inline?: Uint8Array;
}

/**
 * The relay's cache of publications: one copy per sha256 for all its sites, fetched from the
 * upstream with Range, bounded by a disk quota; expired and superseded ones are removed and counted (D5).
 * Adapters: `SqlitePublicationCache` (the relay), `MemoryPublicationCache` (tests); both pass `runPublicationCacheContract`.
 */
export interface PublicationCache {
  /**
   * Records announced blobs (idempotent by sha256; more sites are merged in). Refuses over quota.
   * An item that supersedes earlier publications at its site marks their blobs `superseded` (counted)
   * once no live publication at any site still needs them; a superseded publication announced late is ignored.
   */
  note(items: readonly AnnouncedBlob[]): void;
  /** The next blob to fetch, oldest first. */
  nextToFetch(): CachedPublication | null;
  setFetched(sha256: string, bytes: number): void;
  held(sha256: string): void;
  refuse(sha256: string, reason: string): void;
  /** Removes entries expired at `now`, counted; answers what went (the caller removes their files). */
  expire(now: number): CachedPublication[];
  /** Removes `superseded` entries; answers what went (the caller removes their files). */
  removeSuperseded(): CachedPublication[];
  /** Every entry, oldest announcement first. */
  list(): CachedPublication[];
}

/** How far one fetch step got: `offset` is the next byte wanted, `bytes` what crossed the link. */
export type ChunkResult =
  | { ok: true; offset: number; complete: boolean; bytes: number }
  | (HopFailure & { offset: number; bytes: number });

/**
 * Range fetching into the relay's blob directory (adapter: `RangeFetcher`). Bytes that do not hash to
 * the announced sha256 fail with code `hash-mismatch` (not retryable) and are discarded.
 */
export interface BlobFetcher {
  fetchChunk(
    upstream: { url: string; token: string },
    sha256: string,
    size: number,
    chunkBytes: number,
  ): Promise<ChunkResult>;
  remove(sha256: string): Promise<void>;
  /**
   * Keeps bytes a manifest carried (decision 360) as a completed fetch would be kept: written to the
   * partial file, then the same sha256 check (`hash-mismatch` when they do not hash to it).
   */
  adopt(sha256: string, bytes: Uint8Array): Promise<ChunkResult>;
}
