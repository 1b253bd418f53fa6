import type { ClockEstimate, Priority } from '@driftline/protocol';

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

/**
 * The relay's custody: everything it has receipted and not yet handed on. Every write is one
 * transaction; a method returns only after the commit (D1). `OutOfSpace` is thrown when the store is
 * full, `QuotaExceeded` when a peer would hold more than its quota, with nothing written.
 */
export interface Custody {
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
  /** Downlink for a site after `after` (rows up to `after` are released: the puller has them). */
  downlink(site: string, after: number, limit: number): { bundles: Uint8Array[]; cursor: number };
  /** Stores pulled downlink and the upstream cursor together. */
  storeDownlink(
    upstream: string,
    site: string,
    items: readonly IncomingBundle[],
    cursor: string,
    now: number,
  ): void;
  upstreamCursor(upstream: string, site: string): string | undefined;
  /** Adds to byte counters keyed by window/day; returns nothing. */
  addSent(keys: readonly string[], bytes: number): void;
  sent(key: string): number;
  counter(name: string): number;
  queueStats(now: number): { dest: string; priority: Priority; count: number; oldestMs: number }[];
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

export class OutOfSpace extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'OutOfSpace';
  }
}
