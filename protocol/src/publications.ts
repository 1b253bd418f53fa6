import { z } from 'zod';
import { SiteIdSchema } from './ids.js';

/**
 * Publications (docs/architecture.md#bundles-to-outposts; the word is decision 170's): files headquarters publishes
 * for sites. The file travels as a content-addressed blob; its manifest is a hub-signed `blob` bundle
 * (`BlobManifestSchema`, whose wire field `bundleId` is the publication id, with `fileKind`, `name`)
 * queued on each target site's downlink at `bulk`.
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

/** Where a publication stands at one site, as the agent reports it (and the hub shows it). */
export const PUBLICATION_DELIVERY_STATES = [
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
export const PublicationDeliveryStateSchema = z.enum(PUBLICATION_DELIVERY_STATES);
export type PublicationDeliveryState = z.infer<typeof PublicationDeliveryStateSchema>;

/**
 * One publication's state at an agent, kept in its document under `bundles[bundleId]` (plain data). The
 * document's map and this field keep their names from before decision 170: renaming them would need a
 * migration of every agent's document, and hubs of both versions read them.
 */
export const DocPublicationStateSchema = z.object({
  /** The publication id (the manifest's `bundleId`). */
  bundleId: z.string().min(1).max(64),
  sha256: z.string(),
  name: z.string(),
  fileKind: z.string(),
  size: z.number().int().nonnegative(),
  state: PublicationDeliveryStateSchema,
  /** Bytes held at the agent (the resume offset while downloading). */
  bytes: z.number().int().nonnegative(),
  /** Why it was refused (kind not accepted, over quota, bad signature, hash mismatch). */
  reason: z.string().optional(),
  /** Agent clock, ms. */
  updatedAt: z.number().int().nonnegative(),
});
export type DocPublicationState = z.infer<typeof DocPublicationStateSchema>;

/** `GET /api/publications/:id` per-site row. */
export const PublicationSiteDeliverySchema = z.object({
  site: SiteIdSchema,
  agent: z.string().nullable(),
  state: PublicationDeliveryStateSchema,
  bytes: z.number().int().nonnegative(),
  reason: z.string().nullable(),
  /** When the hub learnt this state, ISO 8601. */
  updatedAt: z.iso.datetime(),
  /**
   * Still `queued` past N contact windows of a site whose agent confirms what it receives: its agent has
   * not reported the publication, and the hub sends the manifest again (decision 300). Absent: not so,
   * or an older hub.
   */
  unconfirmed: z.boolean().optional(),
});
export type PublicationSiteDelivery = z.infer<typeof PublicationSiteDeliverySchema>;

export const PublicationInfoSchema = z.object({
  publicationId: z.string(),
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
export type PublicationInfo = z.infer<typeof PublicationInfoSchema>;

export const PublicationDetailSchema = PublicationInfoSchema.extend({
  deliveries: z.array(PublicationSiteDeliverySchema),
});
export type PublicationDetail = z.infer<typeof PublicationDetailSchema>;

/**
 * `GET /api/publications`: each publication with its per-state counts and its per-site deliveries, so
 * publication × site is one request; `deliveries` is optional as it was for older hubs.
 */
export const PublicationListItemSchema = PublicationInfoSchema.extend({
  deliveries: z.array(PublicationSiteDeliverySchema).optional(),
});
export type PublicationListItem = z.infer<typeof PublicationListItemSchema>;

export const PublicationsResponseSchema = z.object({ publications: z.array(PublicationListItemSchema) });
export type PublicationsResponse = z.infer<typeof PublicationsResponseSchema>;

/** Query of `POST /api/publications` (the body is the file itself, streamed). */
export const PublishQuerySchema = z.object({
  /** Comma-separated site ids, or `all`. */
  site: z.string().min(1),
  name: z.string().min(1).max(255),
  kind: FileKindSchema.default('file'),
  /** Seconds until the publication expires at relays and sites. */
  ttl: z.coerce.number().int().positive().optional(),
  /**
   * `1`: a file of at most `MAX_INLINE_PUBLICATION_BYTES` travels inside its signed manifest, with no
   * fetch (decision 360; only for sites whose agents read it: an older agent refuses such a manifest).
   */
  inline: z.enum(['0', '1']).optional(),
});
export type PublishQuery = z.infer<typeof PublishQuerySchema>;

/**
 * The deprecated `/api/bundles` answers (decision 170), kept for one version: the same shapes with the
 * old field names, `bundleId` for `publicationId` and `bundles` for `publications`.
 */
const withBundleId = <S extends z.ZodObject<{ publicationId: z.ZodString }>>(s: S) =>
  s.omit({ publicationId: true }).extend({ bundleId: z.string() });
export const LegacyBundleDetailSchema = withBundleId(PublicationDetailSchema);
export type LegacyBundleDetail = z.infer<typeof LegacyBundleDetailSchema>;
export const LegacyBundlesResponseSchema = z.object({
  bundles: z.array(withBundleId(PublicationListItemSchema)),
});
export type LegacyBundlesResponse = z.infer<typeof LegacyBundlesResponseSchema>;

/** A publication as the deprecated `/api/bundles` routes answered it: `bundleId` first, as before. */
export function asLegacyBundle<T extends { publicationId: string }>(
  p: T,
): Omit<T, 'publicationId'> & { bundleId: string } {
  const { publicationId, ...rest } = p;
  return { bundleId: publicationId, ...rest };
}
