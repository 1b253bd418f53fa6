import type { Priority } from '@driftline/protocol';

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
}

export type AcceptOutcome = 'stored' | 'duplicate' | 'expired';

export interface QueuedBundle {
  seq: number;
  id: string;
  dest: string;
  priority: Priority;
  size: number;
  receivedAt: number;
  bytes: Uint8Array;
}

/** What expired and was removed, by direction, so it can be counted and logged (D5). */
export interface ExpiredReport {
  uplink: { id: string; dest: string; priority: Priority }[];
  downlink: { id: string; dest: string; priority: Priority }[];
}

/**
 * The relay's custody: everything it has receipted and not yet handed on. Every write is one
 * transaction; a method returns only after the commit (D1). `OutOfSpace` is thrown when the store is
 * full, with nothing written.
 */
export interface Custody {
  accept(from: string, items: readonly IncomingBundle[], now: number): AcceptOutcome[];
  /** Uplink bundles in priority order (control, failure, status, bulk), oldest first within one. */
  nextBatch(now: number, maxBytes: number, maxCount: number): QueuedBundle[];
  /** Removes forwarded bundles (their ids stay known, so a re-send is a duplicate). */
  forwarded(ids: readonly string[]): void;
  /** Removes bundles the upstream refused for good, counting them. */
  refused(ids: readonly string[]): void;
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

export class OutOfSpace extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'OutOfSpace';
  }
}
