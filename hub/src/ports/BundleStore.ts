import type { BundleDeliveryState, FileKind } from '@driftline/protocol';

/** A published bundle (one publication, all its target sites). Times: hub clock, ms. */
export interface BundleRow {
  bundleId: string;
  name: string;
  fileKind: FileKind;
  sha256: string;
  size: number;
  sites: string[];
  publishedAt: number;
  expiresAt: number | null;
}

/** One site's (or one agent's) delivery state of a bundle, as last reported. */
export interface DeliveryRow {
  bundleId: string;
  site: string;
  /** null until an agent reports (state `queued`: on the site's downlink). */
  agent: string | null;
  state: BundleDeliveryState;
  bytes: number;
  reason: string | null;
  updatedAt: number;
}

/**
 * Storage of published bundles and their per-site delivery state. Kept apart from `HubStore` so
 * publishing adds tables without touching ingest's write path; every method is one transaction.
 */
export interface BundleStore {
  /**
   * Records a publication and a `queued` delivery row per target site, and in the same transaction
   * supersedes, per target site, the earlier unexpired publications of the same name and kind there:
   * their delivery rows for that site become `superseded` (and stay so whatever agents report later).
   * Answers the superseded bundle ids per site (sites without any are left out).
   */
  publish(bundle: BundleRow): Promise<Record<string, string[]>>;
  getBundle(bundleId: string): Promise<BundleRow | null>;
  /** Newest first. */
  listBundles(site?: string): Promise<BundleRow[]>;
  /** Upserts agent reports; an agent's row replaces the site's `queued` row. Unknown bundle ids are ignored. */
  report(rows: readonly DeliveryRow[]): Promise<void>;
  deliveries(bundleId: string): Promise<DeliveryRow[]>;
  close(): Promise<void>;
}
