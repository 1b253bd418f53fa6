import type { DocPublicationState } from '@driftline/protocol';

/**
 * A publication as the agent tracks it: the manifest's facts plus where it stands here. Its id is
 * `bundleId`, the document's field name (decision 170), also in the ledger's stored rows.
 */
export interface PublicationEntry extends DocPublicationState {
  /** Publication expiry (hub clock as signed in the manifest), ms. */
  expiresAt: number | null;
  /** Earlier publications (their ids) the manifest says this one supersedes at this site. */
  supersedes?: string[];
  /** Superseded before it was placed: its partial file is still to be removed (by the next step). */
  discardPartial?: boolean;
}

/** The agent's record of announced publications (adapter: SQLite table `bundles_in`, named before decision 170). */
export interface PublicationLedger {
  get(publicationId: string): PublicationEntry | null;
  put(entry: PublicationEntry): void;
  all(): PublicationEntry[];
}

/** Partial and placed files (adapter: the file system). Nothing is ever executed or unpacked. */
export interface PublicationFiles {
  /** Bytes of the partial download on disk: the resume offset. */
  offset(sha256: string): Promise<number>;
  /** Appends to the partial file; `close` fsyncs, so what arrived survives a crash. */
  openAppend(sha256: string): Promise<{ write(chunk: Uint8Array): Promise<void>; close(): Promise<void> }>;
  /** sha256 of the complete partial file. */
  digest(sha256: string): Promise<string>;
  /** Moves the verified partial file into `dir` as `name` atomically (fsync, rename, fsync dir). */
  place(sha256: string, dir: string, name: string): Promise<string>;
  discard(sha256: string): Promise<void>;
  /** Where the verified partial file is, for a sink that reads it (a git bundle is fetched from, not placed). */
  pathOf(sha256: string): string;
}

/**
 * A kind of publication the agent does something with instead of placing it in a directory: `git`
 * bundles are fetched into the site's mirror; packed provider archives go to their place in the provider mirror.
 */
export interface PublicationSink {
  /** Why a publication of this name is refused before any byte is fetched, or null to take it. */
  refuse(name: string): string | null;
  /** Takes the verified file; the receiver discards it afterwards. A refusal's reason is reported to the hub. */
  apply(b: {
    sha256: string;
    name: string;
    path: string;
  }): Promise<{ ok: true } | { ok: false; reason: string }>;
}

/** `GET /v1/blobs/:sha256` with Range at the agent's upstreams, appending to the partial file. */
export interface BlobSource {
  fetchInto(
    sha256: string,
    start: number,
    end: number,
    files: PublicationFiles,
  ): Promise<{ ok: true; offset: number } | { ok: false; offset: number; error: string }>;
}
