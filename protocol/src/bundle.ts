import { z } from 'zod';
import { AgentIdSchema, BundleIdSchema, RunIdSchema, Sha256Schema, SiteIdSchema } from './ids.js';

/** The kinds of bundle (docs/architecture.md#wire). Anything else is rejected by the codec with `unknown-kind`. */
export const BUNDLE_KINDS = ['doc-delta', 'ack', 'control', 'blob'] as const;
export const BundleKindSchema = z.enum(BUNDLE_KINDS);
export type BundleKind = z.infer<typeof BundleKindSchema>;

/**
 * Forwarding priority, most urgent first. Relays forward in this order; a bulk transfer never
 * holds up a plan result (docs/architecture.md#bundles-to-outposts).
 */
export const PRIORITIES = ['control', 'failure', 'status', 'bulk'] as const;
export const PrioritySchema = z.enum(PRIORITIES);
export type Priority = z.infer<typeof PrioritySchema>;
/** Numeric rank of a priority: 0 is forwarded first. */
export const priorityRank = (p: Priority): number => PRIORITIES.indexOf(p);

/** Who made a bundle or is meant to receive it: the hub, a whole site, or one agent at a site. */
export const EndpointSchema = z.union([
  z.literal('hub'),
  z.strictObject({ site: SiteIdSchema, agent: AgentIdSchema.optional() }),
]);
export type Endpoint = z.infer<typeof EndpointSchema>;

export function endpointText(e: Endpoint): string {
  if (e === 'hub') return 'hub';
  return e.agent ? `${e.site}/${e.agent}` : e.site;
}

/** Automerge change hashes (hex), as returned by `getHeads`. */
export const HeadsSchema = z.array(z.string().regex(/^[0-9a-f]{64}$/, 'a head is a 64-hex change hash'));

export const BundleHeaderSchema = z.strictObject({
  id: BundleIdSchema,
  kind: BundleKindSchema,
  source: EndpointSchema,
  destination: EndpointSchema,
  /** Milliseconds since the epoch on the source's clock. */
  created: z.number().int().nonnegative(),
  /** Seconds after `created` when the bundle may be dropped (counted and reported, never silently). */
  lifetimeS: z.number().int().positive(),
  priority: PrioritySchema,
  /** The document (epoch) this bundle concerns, for `doc-delta` and `ack`. */
  doc: z.string().min(1).max(200).optional(),
  /** Heads of `doc` after applying this bundle (`doc-delta`) or acknowledged by the hub (`ack`). */
  heads: HeadsSchema.optional(),
});
export type BundleHeader = z.infer<typeof BundleHeaderSchema>;

const Bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected a byte string');

/** Longest content type a blob announcement names. */
export const MAX_CONTENT_TYPE = 100;
/** Most blob announcements one push carries (v1's JSON and v2's blob list alike). */
export const MAX_BLOB_ANNOUNCEMENTS = 4096;

/** A blob the source holds and will upload (by tus); the hub fetches nothing, it waits for it. */
export const BlobAnnouncementSchema = z.strictObject({
  sha256: Sha256Schema,
  size: z.number().int().nonnegative(),
  contentType: z.string().max(MAX_CONTENT_TYPE),
  runId: RunIdSchema.optional(),
});
export type BlobAnnouncement = z.infer<typeof BlobAnnouncementSchema>;

/** `doc-delta`: Automerge changes the hub has not acknowledged (`saveSince` its acked heads). */
export const DocDeltaPayloadSchema = z.strictObject({
  /** Epoch number of `header.doc`; epochs of one agent are numbered from 1. */
  epoch: z.number().int().positive(),
  changes: Bytes,
  blobs: z.array(BlobAnnouncementSchema),
  /** true when the agent has sealed this epoch: no change will follow in it. */
  sealed: z.boolean().optional(),
});
export type DocDeltaPayload = z.infer<typeof DocDeltaPayloadSchema>;

/** `ack`: the hub's heads for one agent document epoch, after its commit (end-to-end; D4). */
export const AckPayloadSchema = z.strictObject({
  agent: AgentIdSchema,
  doc: z.string().min(1).max(200),
  heads: HeadsSchema,
  /** Blobs the hub holds, verified, so the agent may delete its copies. */
  blobs: z.array(Sha256Schema),
  /** Hub time of the commit, milliseconds since the epoch. */
  committedAt: z.number().int().nonnegative(),
  /**
   * The hub reads the document's `confirmed` map (decision 330): the agent may write an unchanged
   * re-plan there instead of rewriting its cell. Sent only for a document that has the map (so never to
   * an agent older than the field, whose strict schema would refuse the ack).
   */
  readsConfirmed: z.literal(true).optional(),
});
export type AckPayload = z.infer<typeof AckPayloadSchema>;

/** Most bundle ids one rejection names (D5: an agent refused 10,000 times gets one bounded message). */
export const MAX_REJECTED_IDS = 100;

/** `control`: a hub request or refusal, signed with the hub key the agent pins (S3, S4). */
export const ControlPayloadSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('plan-request'),
    requestId: z.string().min(1).max(64),
    site: SiteIdSchema,
    environment: z.string().min(1),
    component: z.string().min(1),
    /** The ref to plan (default: the component's default ref). */
    ref: z.string().max(200).optional(),
    /** Plan this commit of the ref once the site holds it (default: the ref's head when the request runs). */
    commit: z.string().max(64).optional(),
    requestedAt: z.number().int().nonnegative(),
    expiresAt: z.number().int().nonnegative(),
  }),
  /**
   * The hub refused bundles of this agent (step 8 of docs/architecture.md#the-trip: refusals are answered like acks). Addressed to
   * the site and agent the refused bundles' header named: an unknown agent's signature cannot be checked,
   * so a rejection reveals only the code, the bundle ids and the times, never the hub's message. The hub
   * keeps at most one undelivered rejection per (site, agent, code); a newer one replaces it.
   */
  z.strictObject({
    type: z.literal('rejection'),
    site: SiteIdSchema,
    agent: AgentIdSchema,
    /** A code of the `ERRORS` table (`unknown-agent`, `revoked-agent`, `bad-signature`, …). */
    code: z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, 'an error code is lowercase words joined by -'),
    /** The refused bundles, oldest first: the latest `MAX_REJECTED_IDS` when more were refused. */
    bundleIds: z.array(BundleIdSchema).min(1).max(MAX_REJECTED_IDS),
    /** How many bundles were refused with this code between `firstAt` and `lastAt`. */
    count: z.number().int().positive(),
    /** Hub time of the first and the latest refusal reported, milliseconds since the epoch. */
    firstAt: z.number().int().nonnegative(),
    lastAt: z.number().int().nonnegative(),
  }),
  /**
   * An approver-signed approval to apply one saved plan (`ApprovalSchema`), relayed by the hub. The hub's
   * signature only says the hub relayed it; the agent checks the approver's own signature against the keys
   * its config pins, so the value stays opaque here and every problem is the agent's refusal to report.
   */
  z.strictObject({
    type: z.literal('approval'),
    site: SiteIdSchema,
    approval: z.unknown(),
  }),
  /**
   * The contact windows the hub declares for the agent's site (`contactPlans.sites` in hub.yaml), sent to
   * agents that read them (`reads: hub-windows`) until the agent's `hubWindows` fact names the same ones
   * (docs/decisions/590-windows-declared-once.md). The agent takes the newest by `declaredAt` (hub clock)
   * and aims at them beside its own; an empty list withdraws them.
   */
  z.strictObject({
    type: z.literal('contact-windows'),
    site: SiteIdSchema,
    agent: AgentIdSchema,
    windows: z.array(z.string().max(200)).max(50),
    declaredAt: z.number().int().nonnegative(),
  }),
]);
export type ControlPayload = z.infer<typeof ControlPayloadSchema>;
/** A hub refusal of an agent's bundles, as it travels on the site's downlink. */
export type RejectionPayload = Extract<ControlPayload, { type: 'rejection' }>;
/** A hub request to plan one cell now (S3: only a cell the agent's own config lists). */
export type PlanRequestPayload = Extract<ControlPayload, { type: 'plan-request' }>;
/** The hub's declared contact windows for one agent's site (decision 590). */
export type ContactWindowsPayload = Extract<ControlPayload, { type: 'contact-windows' }>;

/**
 * Most bytes a publication may carry inside its manifest (`BlobManifest.inline`, decision 360): a
 * few-line commit's git bundle is well under it; anything larger goes by the resumable Range fetch, so a
 * downlink answer that also carries control traffic never grows by more than this.
 */
export const MAX_INLINE_PUBLICATION_BYTES = 4096;

/** Most publications one manifest supersedes (v1's list and the compact manifest's, decision 505). */
export const MAX_SUPERSEDES = 1000;

/** `blob`: a manifest of a content-addressed file (plan detail up, a publication down). */
export const BlobManifestSchema = z.strictObject({
  sha256: Sha256Schema,
  size: z.number().int().nonnegative(),
  /** Left out of a manifest that carries its file `inline` (decision 360; nothing at a site reads it). */
  contentType: z.string().max(100).optional(),
  name: z.string().max(255).optional(),
  /** For files from headquarters: `provider-mirror`, `module`, `image`, `config`, `file`. */
  fileKind: z.string().max(40).optional(),
  expiresAt: z.number().int().nonnegative().optional(),
  /**
   * For files from headquarters: the publication this manifest belongs to (one per publish, all sites).
   * The name is from before decision 170: signed payloads are strict objects, so an older agent would
   * refuse a manifest with a new field name.
   */
  bundleId: z.string().min(1).max(64).optional(),
  /** For files from headquarters: the sites the publication targets. */
  sites: z.array(SiteIdSchema).optional(),
  /**
   * For files from headquarters: earlier publications (`bundleId`s) of the same name and kind for this
   * site that this one replaces. Relays drop their blobs unless a live publication still needs them; agents
   * stop fetching them and never delete a file already placed (only an atomic rename at the same path replaces it).
   */
  supersedes: z.array(z.string().min(1).max(64)).max(MAX_SUPERSEDES).optional(),
  /**
   * For a small file from headquarters (decision 360): the file itself, so it reaches the site with its
   * manifest and no second request. The agent checks it against `size` and `sha256` exactly as it checks
   * fetched bytes; relays still fetch and keep the blob, so a site that lost it (a restart) fetches it.
   * Additive: an agent before decision 360 refuses a manifest with this field (strict schema), so the hub
   * sends it only when the publisher asks (`hub source publish --inline`).
   */
  inline: Bytes.refine((b) => b.length <= MAX_INLINE_PUBLICATION_BYTES, {
    message: `inline bytes are over ${MAX_INLINE_PUBLICATION_BYTES} (send the file by Range fetch instead)`,
  }).optional(),
});
export type BlobManifest = z.infer<typeof BlobManifestSchema>;

export const PAYLOAD_SCHEMAS = {
  'doc-delta': DocDeltaPayloadSchema,
  ack: AckPayloadSchema,
  control: ControlPayloadSchema,
  blob: BlobManifestSchema,
} as const satisfies Record<BundleKind, z.ZodType>;

export type PayloadOf<K extends BundleKind> = z.infer<(typeof PAYLOAD_SCHEMAS)[K]>;
