import { asLegacyBundle, type FileKind, type PublicationDeliveryState } from '@driftline/protocol';

/** A publication: one file published to all its target sites. Times: hub clock, ms. */
export interface PublicationRow {
  publicationId: string;
  name: string;
  fileKind: FileKind;
  sha256: string;
  size: number;
  sites: string[];
  publishedAt: number;
  expiresAt: number | null;
}

/** One site's (or one agent's) delivery state of a publication, as last reported. */
export interface DeliveryRow {
  publicationId: string;
  site: string;
  /** null until an agent reports (state `queued`: on the site's downlink). */
  agent: string | null;
  state: PublicationDeliveryState;
  bytes: number;
  reason: string | null;
  updatedAt: number;
}

/**
 * Storage of publications and their per-site delivery state. Kept apart from `HubStore` so
 * publishing adds tables without touching ingest's write path; every method is one transaction.
 * The adapters' tables, columns and stored JSON keep their names from before decision 170
 * (`published_bundles`, `bundle_id`, `bundleId`): stores in the field read as they are.
 */
export interface PublicationStore {
  /**
   * Records a publication and a `queued` delivery row per target site, and in the same transaction
   * supersedes, per target site, the earlier unexpired publications of the same name and kind there:
   * their delivery rows for that site become `superseded` (and stay so whatever agents report later).
   * Answers the superseded publication ids per site (sites without any are left out).
   */
  publish(publication: PublicationRow): Promise<Record<string, string[]>>;
  getPublication(publicationId: string): Promise<PublicationRow | null>;
  /** Newest first. */
  listPublications(site?: string): Promise<PublicationRow[]>;
  /** Upserts agent reports; an agent's row replaces the site's `queued` row. Unknown ids are ignored. */
  report(rows: readonly DeliveryRow[]): Promise<void>;
  deliveries(publicationId: string): Promise<DeliveryRow[]>;
  close(): Promise<void>;
}

/** Why a delivery row is `superseded` (new rows; rows written before decision 170 say "bundle"). */
export const supersededReason = (by: string) => `superseded by publication ${by} (same name and kind)`;

/**
 * A row as the SQL adapters store it (JSON): `bundleId` for `publicationId`, the name of before decision
 * 170, so rows written by either version read the same.
 */
export const toStoredRow = asLegacyBundle;

/** Reads a stored row back (see `toStoredRow`); takes the parsed JSON or its text. */
export function fromStoredRow<T extends { publicationId: string }>(stored: unknown): T {
  const o = (typeof stored === 'string' ? JSON.parse(stored) : stored) as Record<string, unknown>;
  const { bundleId, publicationId, ...rest } = o;
  return { publicationId: publicationId ?? bundleId, ...rest } as T;
}
