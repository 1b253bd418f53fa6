import { z } from 'zod';
import { SiteIdSchema } from './ids.js';

/**
 * Bundles to outposts (DESIGN, "Bundles to outposts"): files headquarters publishes for sites.
 * The file travels as a content-addressed blob; its manifest is a hub-signed `blob` bundle
 * (`BlobManifestSchema` with `bundleId`, `fileKind`, `name`) queued on each target site's downlink at `bulk`.
 */

/**
 * What a published file is for; the agent's local config names a directory per accepted kind. `git` is
 * a `git bundle` of a repository a component plans from (its `name` is the repository's): the agent
 * fetches it into its mirror instead of placing it. `agent-release` is an offline package
 * (`driftline-edge-<version>-linux-<arch>.tar.gz`, `hub release publish`): an agent whose config has
 * `releases.install` verifies it and unpacks it next to the running version.
 */
export const FILE_KINDS = [
  'provider-mirror',
  'module',
  'image',
  'config',
  'file',
  'git',
  'agent-release',
] as const;
export const FileKindSchema = z.enum(FILE_KINDS);
export type FileKind = z.infer<typeof FileKindSchema>;

/** Where a bundle stands at one site, as the agent reports it (and the hub shows it). */
export const BUNDLE_DELIVERY_STATES = [
  'queued',
  'announced',
  'downloading',
  'verified',
  'placed',
  'refused',
  'expired',
  /** A later publication of the same name and kind for the site replaced it (additive, after `expired`). */
  'superseded',
] as const;
export const BundleDeliveryStateSchema = z.enum(BUNDLE_DELIVERY_STATES);
export type BundleDeliveryState = z.infer<typeof BundleDeliveryStateSchema>;

/** One bundle's state at an agent, kept in its document under `bundles[bundleId]` (plain data). */
export const DocBundleStateSchema = z.object({
  bundleId: z.string().min(1).max(64),
  sha256: z.string(),
  name: z.string(),
  fileKind: z.string(),
  size: z.number().int().nonnegative(),
  state: BundleDeliveryStateSchema,
  /** Bytes held at the agent (the resume offset while downloading). */
  bytes: z.number().int().nonnegative(),
  /** Why it was refused (kind not accepted, over quota, bad signature, hash mismatch). */
  reason: z.string().optional(),
  /** Agent clock, ms. */
  updatedAt: z.number().int().nonnegative(),
});
export type DocBundleState = z.infer<typeof DocBundleStateSchema>;

/** `GET /api/bundles/:id` per-site row. */
export const BundleSiteDeliverySchema = z.object({
  site: SiteIdSchema,
  agent: z.string().nullable(),
  state: BundleDeliveryStateSchema,
  bytes: z.number().int().nonnegative(),
  reason: z.string().nullable(),
  /** When the hub learnt this state, ISO 8601. */
  updatedAt: z.iso.datetime(),
});
export type BundleSiteDelivery = z.infer<typeof BundleSiteDeliverySchema>;

export const BundleInfoSchema = z.object({
  bundleId: z.string(),
  name: z.string(),
  fileKind: FileKindSchema,
  sha256: z.string(),
  size: z.number().int().nonnegative(),
  sites: z.array(SiteIdSchema),
  publishedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().nullable(),
  /** Count of target sites per delivery state. */
  stateCounts: z.record(z.string(), z.number().int().nonnegative()),
});
export type BundleInfo = z.infer<typeof BundleInfoSchema>;

export const BundleDetailSchema = BundleInfoSchema.extend({ deliveries: z.array(BundleSiteDeliverySchema) });
export type BundleDetail = z.infer<typeof BundleDetailSchema>;

/**
 * `GET /api/bundles`: each bundle with its per-state counts and (since the dashboard's bundles view)
 * its per-site deliveries, so bundle × site is one request; `deliveries` is optional for older hubs.
 */
export const BundleListItemSchema = BundleInfoSchema.extend({
  deliveries: z.array(BundleSiteDeliverySchema).optional(),
});
export type BundleListItem = z.infer<typeof BundleListItemSchema>;

export const BundlesResponseSchema = z.object({ bundles: z.array(BundleListItemSchema) });
export type BundlesResponse = z.infer<typeof BundlesResponseSchema>;

/** Query of `POST /api/bundles` (the body is the file itself, streamed). */
export const BundlePublishQuerySchema = z.object({
  /** Comma-separated site ids, or `all`. */
  site: z.string().min(1),
  name: z.string().min(1).max(255),
  kind: FileKindSchema.default('file'),
  /** Seconds until the bundle expires at relays and sites. */
  ttl: z.coerce.number().int().positive().optional(),
});
export type BundlePublishQuery = z.infer<typeof BundlePublishQuerySchema>;
