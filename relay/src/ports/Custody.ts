import type { ClockEstimate, Priority } from '@driftline/protocol';
import type { PendingBlob } from './BlobUploader.js';

/** One incoming bundle after framing decode: what custody needs to know about it. */
export interface IncomingBundle {
  id: string;
  /** `hub` for uplink, or the destination site for downlink. */
  dest: string;
  priority: Priority;
  kind: string;
  /** ms since the epoch on the relay's clock when the bundle may be dropped. */
  expiresAt: number;
  bytes: Uint8Array;
  /** `site/agent` that made it (uplink bundles). */
  source?: string;
  /** Its source's clock minus the relay's, as the path so far told it (null: no estimate). */
  clock?: ClockEstimate | null;
}

export type AcceptOutcome = 'stored' | 'duplicate' | 'expired';

/** What one downstream peer may hold at this relay (D5): bundles and bytes (bundles and its pending blobs). */
export interface PeerQuota {
  maxBundles: number;
  maxBytes: number;
  /** Bytes the peer's in-progress uploads have reserved, counted with what it holds. */
  reservedBytes?: number;
}

export interface QueuedBundle {
  seq: number;
  id: string;
  dest: string;
  priority: Priority;
  size: number;
  receivedAt: number;
  bytes: Uint8Array;
  /** `site/agent` that made it, when known. */
  source?: string | null;
  /** Its source's clock minus the relay's, taken in with it (null: none). */
  clock?: ClockEstimate | null;
}

/** What expired and was removed, by direction, so it can be counted and logged (D5). */
export interface ExpiredReport {
  uplink: { id: string; dest: string; priority: Priority }[];
  downlink: { id: string; dest: string; priority: Priority }[];
}

/** What counts against `storage.maxBytes`, in bytes. */
export interface StorageUsage {
  /** The store itself (the SQLite file; bundles held, in memory). */
  dbBytes: number;
  /** Blobs in custody and publications on disk. */
  blobBytes: number;
  /** Bytes outside custody that count too (in-progress uploads). */
  externalBytes: number;
  total: number;
}

/**
 * Blobs in custody: uploaded by tus, complete and verified, not yet passed upstream. A blob belongs to
 * the peer that uploaded it; it leaves custody once one upstream has it (as a forwarded bundle does).
 */
export interface BlobCustody {
  /** Records a blob uploaded by `fromPeer` (idempotent by sha256); it is pending until one upstream has it. */
  record(
    sha256: string,
    size: number,
    path: string,
    metadata: Record<string, string>,
    fromPeer: string,
    now: number,
  ): void;
  /**
   * Blobs not yet uploaded to any upstream, oldest first, with the URL of an upload to `upstream` begun
   * earlier; with `now`, without those set aside for `upstream` until after `now`.
   */
  pending(upstream: string, limit: number, now?: number): PendingBlob[];
  /**
   * `upstream` refused the blob in a way sending it again unchanged will not fix (too large, bad
   * metadata): skip it for that upstream until `until` (ms), so the blobs behind it go. It stays held.
   */
  setAside(sha256: string, upstream: string, until: number, reason: string): void;
  /** The blobs set aside for `upstream` whose time is not over at `now`, oldest first. */
  setAsideFor(upstream: string, now: number): { sha256: string; until: number; reason: string }[];
  /** Keeps an upload's URL so a restarted relay resumes instead of starting over (null forgets it). */
  setUploadUrl(sha256: string, upstream: string, url: string | null): void;
  /**
   * An upstream has the blob: it leaves custody, counted. Answers the file to delete, or null when a
   * cached publication still uses it.
   */
  forwarded(sha256: string): string | null;
  /** The blob's file is gone from disk: it leaves custody without reaching any upstream, counted (`blobs_lost`). */
  lost(sha256: string): void;
  /** Whether `peer` may read the blob here: it uploaded it, or a bundle held for one of its sites has it. */
  visibleTo(sha256: string, peer: { name: string; sites: readonly string[] }): boolean;
}

/**
 * Uplink custody: bundles a downstream peer hands in (`accept`) until the forwarder hands them upstream
 * (`nextBatch`, `forwarded`, `refused`) or their lifetime ends (`expire`).
 */
export interface UplinkCustody {
  /** `storage.maxBytes`, when set. */
  readonly maxBytes: number | undefined;
  /** Bytes kept outside custody that count against `maxBytes` (in-progress uploads); the wiring sets it. */
  externalBytes: () => number;
  /**
   * Takes uplink bundles (destination `hub`) from a downstream peer. A bundle is known by its id and
   * content hash: the same bytes again are a `duplicate`, a different copy under a known id is held
   * too (only the hub can tell which one its agent signed).
   */
  accept(from: string, items: readonly IncomingBundle[], now: number, quota?: PeerQuota): AcceptOutcome[];
  /** Uplink bundles in priority order (control, failure, status, bulk), oldest first within one. */
  nextBatch(now: number, maxBytes: number, maxCount: number): QueuedBundle[];
  /** Removes forwarded bundles by seq (their id and hash stay known, so a re-send is a duplicate). */
  forwarded(seqs: readonly number[]): void;
  /** Removes bundles the upstream refused for good, by seq, counting them. */
  refused(seqs: readonly number[]): void;
  expire(now: number): ExpiredReport;
  /** What `peer` holds here: uplink bundles, and their bytes plus its blobs in custody. */
  held(peer: string): { bundles: number; bytes: number };
}

/** Downlink custody: what the relay pulled from upstream for its sites, until a site pulls it. */
export interface DownlinkCustody {
  /** Downlink for a site after `after` (rows up to `after` are released: the puller has them). */
  downlink(site: string, after: number, limit: number): { bundles: Uint8Array[]; cursor: number };
  /**
   * Stores pulled downlink and the upstream cursor together. A bundle is known by (site, id, sha256), as
   * on the uplink: the same bytes again (from any upstream, even after the site pulled them) are dropped;
   * a different copy under a known id is a second candidate, held and served beside the first (the
   * agent's signature check keeps the genuine one), and answered in `conflicts` so the caller counts it.
   */
  storeDownlink(
    upstream: string,
    site: string,
    items: readonly IncomingBundle[],
    cursor: string,
    now: number,
  ): { conflicts: string[] };
  upstreamCursor(upstream: string, site: string): string | undefined;
}

/** What custody counts and measures: metrics, health, the byte budget per contact window. */
export interface CustodyStats {
  /** Held per peer, for metrics. */
  heldByPeer(): { peer: string; bundles: number; bytes: number }[];
  usage(): StorageUsage;
  /** Adds to byte counters keyed by window/day; returns nothing. */
  addSent(keys: readonly string[], bytes: number): void;
  sent(key: string): number;
  counter(name: string): number;
  /** Adds `by` to the counter `name` (what was dropped or passed on, D5). */
  count(name: string, by: number): void;
  queueStats(now: number): { dest: string; priority: Priority; count: number; oldestMs: number }[];
}

/**
 * The relay's custody: everything it has receipted and not yet handed on, as the slices above (each
 * consumer typed on those it uses) plus its blobs. Every write is one transaction; a method returns only
 * after the commit (D1). `OutOfSpace` is thrown when the store is full, `QuotaExceeded` when a peer would
 * hold more than its quota, with nothing written. Adapters: `SqliteCustody` (the relay), `MemoryCustody`
 * (tests); both pass `runCustodyContract`.
 */
export interface Custody extends UplinkCustody, DownlinkCustody, CustodyStats {
  readonly blobs: BlobCustody;
  close(): void;
}

/** A peer's batch would take it past its quota: `bundles` (answer 429) or `bytes` (answer 507). */
export class QuotaExceeded extends Error {
  constructor(
    readonly what: 'bundles' | 'bytes',
    detail: string,
  ) {
    super(detail);
    this.name = 'QuotaExceeded';
  }
}

/**
 * The quota rule every adapter applies after staging a peer's batch: `held` is what the peer would hold
 * with it (bundles, and bytes of bundles and blobs); in-progress uploads' `reservedBytes` count too.
 */
export function checkQuota(peer: string, held: { bundles: number; bytes: number }, q: PeerQuota): void {
  if (held.bundles > q.maxBundles)
    throw new QuotaExceeded(
      'bundles',
      `peer '${peer}' would hold ${held.bundles} bundles here, over its ${q.maxBundles}`,
    );
  const bytes = held.bytes + (q.reservedBytes ?? 0);
  if (bytes > q.maxBytes)
    throw new QuotaExceeded('bytes', `peer '${peer}' would hold ${bytes} bytes here, over its ${q.maxBytes}`);
}

export class OutOfSpace extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'OutOfSpace';
  }
}
