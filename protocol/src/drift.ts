import { z } from 'zod';

/**
 * Drift as objects (DESIGN "The hub at fleet scale", decision 421): an episode per cell and address,
 * open from the first plan that saw it to the first that did not, with a signature shared across sites;
 * waivers that mark matching drift `waived` until they expire.
 */

/** `drift`: a `resource_drift` entry; `check`: a failing check; `failure`: a failed plan (address empty). */
export const EPISODE_KINDS = ['drift', 'check', 'failure'] as const;
export const EpisodeKindSchema = z.enum(EPISODE_KINDS);
export type EpisodeKind = z.infer<typeof EpisodeKindSchema>;

/** `waived`: open, and an active waiver covers it (counted apart, never in attention). */
export const EPISODE_STATES = ['open', 'resolved', 'waived'] as const;
export const EpisodeStateSchema = z.enum(EPISODE_STATES);
export type EpisodeState = z.infer<typeof EpisodeStateSchema>;

export const DriftEpisodeSchema = z.object({
  id: z.string(),
  kind: EpisodeKindSchema,
  site: z.string(),
  environment: z.string(),
  component: z.string(),
  /** The resource or check address as the plan named it (instance keys masked at the site); empty for a failure. */
  address: z.string(),
  /** The resource type (`aws_security_group`), `check`, or the failure's reason (`exit-1`). */
  type: z.string(),
  /** Names of the attributes involved (never values). */
  attributes: z.array(z.string()),
  /** Shared by the same problem at every site: see `/api/drift/groups`. */
  signature: z.string(),
  state: EpisodeStateSchema,
  /** When the first plan that saw it ran (hub time). */
  firstSeen: z.iso.datetime(),
  /** When the last plan that saw it ran. */
  lastSeen: z.iso.datetime(),
  /** When the first plan that no longer saw it ran; null while open. */
  resolvedAt: z.iso.datetime().nullable(),
  /** Seconds from first seen to resolved (or to now while open). */
  durationS: z.number().nonnegative(),
  firstRunId: z.string(),
  lastRunId: z.string(),
  acknowledgedBy: z.string().nullable(),
  acknowledgedAt: z.iso.datetime().nullable(),
  /** The waiver that covers it, while one does. */
  waiver: z.string().nullable(),
  /** For a failure: the redacted first line of its error excerpt. */
  detail: z.string().optional(),
});
export type DriftEpisode = z.infer<typeof DriftEpisodeSchema>;

const name = z.string().min(1).max(300);

export const DriftQuerySchema = z.object({
  site: name.optional(),
  environment: name.optional(),
  component: name.optional(),
  address: name.optional(),
  type: name.optional(),
  kind: EpisodeKindSchema.optional(),
  state: EpisodeStateSchema.optional(),
  signature: z.string().min(1).max(1000).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  /** `nextCursor` of the previous page. */
  cursor: z
    .string()
    .regex(/^[0-9]{1,15}$/)
    .optional(),
});
export type DriftQuery = z.infer<typeof DriftQuerySchema>;

export const DriftResponseSchema = z.object({
  episodes: z.array(DriftEpisodeSchema),
  nextCursor: z.string().nullable(),
});
export type DriftResponse = z.infer<typeof DriftResponseSchema>;

/** One row per signature: the same problem at many sites is one row. */
export const DriftGroupSchema = z.object({
  signature: z.string(),
  kind: EpisodeKindSchema,
  type: z.string(),
  /** The address with module instance keys and indices generalised (`module.net[*].aws_subnet.a[*]`). */
  address: z.string(),
  attributes: z.array(z.string()),
  sites: z.number().int().nonnegative(),
  cells: z.number().int().nonnegative(),
  open: z.number().int().nonnegative(),
  waived: z.number().int().nonnegative(),
  firstSeen: z.iso.datetime(),
  detail: z.string().optional(),
});
export type DriftGroup = z.infer<typeof DriftGroupSchema>;

export const DriftGroupsQuerySchema = z.object({
  kind: EpisodeKindSchema.optional(),
  /** Include groups whose every episode is waived (default: yes, counted in `waived`). */
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z
    .string()
    .regex(/^[0-9]{1,15}$/)
    .optional(),
});
export type DriftGroupsQuery = z.infer<typeof DriftGroupsQuerySchema>;

export const DriftGroupsResponseSchema = z.object({
  groups: z.array(DriftGroupSchema),
  nextCursor: z.string().nullable(),
  /** Open episodes not waived, waived ones, and failing-check episodes, fleet-wide. */
  totals: z.object({
    open: z.number().int().nonnegative(),
    waived: z.number().int().nonnegative(),
    checks: z.number().int().nonnegative(),
    failures: z.number().int().nonnegative(),
  }),
});
export type DriftGroupsResponse = z.infer<typeof DriftGroupsResponseSchema>;

const patterns = z.array(name).max(100);

/**
 * A waiver: matching drift is `waived` until `expires`. `pattern` is matched (with `*` for any text)
 * against the episode's address and against its signature.
 */
export const WaiverCreateSchema = z.object({
  pattern: z.string().min(1).max(1000),
  /** Only drift in these attributes (all of the episode's attributes must be listed); absent: any. */
  attributes: z.array(z.string().min(1).max(200)).max(100).optional(),
  sites: patterns.optional(),
  environments: patterns.optional(),
  components: patterns.optional(),
  /** An ISO 8601 time, or a duration from now: `30m`, `12h`, `7d` (at most 365 days). */
  expires: z.string().min(2).max(40),
  reason: z.string().min(1).max(500),
});
export type WaiverCreate = z.infer<typeof WaiverCreateSchema>;

export const WaiverSchema = z.object({
  id: z.string(),
  pattern: z.string(),
  attributes: z.array(z.string()).nullable(),
  sites: z.array(z.string()),
  environments: z.array(z.string()),
  components: z.array(z.string()),
  expiresAt: z.iso.datetime(),
  reason: z.string(),
  author: z.string(),
  createdAt: z.iso.datetime(),
  removedAt: z.iso.datetime().nullable(),
  removedBy: z.string().nullable(),
  /** Not removed and not expired. */
  active: z.boolean(),
  /** Open episodes it covers now. */
  covers: z.number().int().nonnegative(),
});
export type Waiver = z.infer<typeof WaiverSchema>;

export const WaiversResponseSchema = z.object({ waivers: z.array(WaiverSchema) });
export type WaiversResponse = z.infer<typeof WaiversResponseSchema>;
