import { z } from 'zod';
import { ErrorCodeSchema } from './errors.js';
import { AgentIdSchema, BundleIdSchema, SiteIdSchema } from './ids.js';

/**
 * JSON shapes of the hop API (`/v1/…`), served alike by relays and the hub (docs/architecture.md#wire).
 */

/**
 * One answer per bundle of a `POST /v1/bundles` batch, sent only after the node's commit (D1).
 * `stored`: taken into custody now; `duplicate`: already held or delivered (D2), also a success;
 * `rejected`: refused for `code`; the sender must not retry it unchanged.
 */
export const ReceiptSchema = z.object({
  bundleId: BundleIdSchema.nullable(),
  /** Position of the bundle in the batch, so a bundle too broken to have an id can be named. */
  index: z.number().int().nonnegative(),
  status: z.enum(['stored', 'duplicate', 'rejected']),
  code: ErrorCodeSchema.optional(),
  message: z.string().optional(),
  /** Who answered: `hub` or the relay's name; a relay's receipt prunes nothing at the agent (D4). */
  by: z.string(),
});
export type Receipt = z.infer<typeof ReceiptSchema>;

export const ReceiptsResponseSchema = z.object({ receipts: z.array(ReceiptSchema) });
export type ReceiptsResponse = z.infer<typeof ReceiptsResponseSchema>;

/** `GET /v1/bundles?for=<site>&after=<cursor>&limit=<n>` */
export const DownlinkQuerySchema = z.object({
  for: SiteIdSchema,
  after: z
    .string()
    .regex(/^[0-9]{1,20}$/, 'cursor is the decimal number the previous answer gave')
    .optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /**
   * Hold the pull open up to this many seconds while the site's downlink is empty (a long poll); a server
   * that holds pulls answers with {@link HELD_HEADER} (`0` only asks whether it does). Servers that cannot
   * hold ignore it and answer at once.
   */
  wait: z.coerce.number().int().min(0).max(86_400).optional(),
});
export type DownlinkQuery = z.infer<typeof DownlinkQuerySchema>;

/**
 * Longest hold a downlink pull may ask for, seconds (`wait`), of a server that states its own longest: a
 * day (docs/decisions/390-long-holds.md; an hour before it).
 */
export const MAX_DOWNLINK_WAIT_S = 86_400;
/**
 * Longest hold a client before docs/decisions/390-long-holds.md can read in `max=`: it takes a larger one
 * for garbage, and falls back to {@link LEGACY_DOWNLINK_WAIT_S}. A server states more only to a pull that
 * asks more, or that carries {@link LONG_HOLDS_HEADER}.
 */
export const LEGACY_MAX_STATED_S = 3600;
/**
 * Request header of a held pull from a client that reads a `max=` over {@link LEGACY_MAX_STATED_S}
 * (`driftline-long-holds: 1`). Sent only until the client knows whether the server grants more than that.
 */
export const LONG_HOLDS_HEADER = 'driftline-long-holds';
/**
 * Longest hold asked of a server that states no longest hold: servers before docs/decisions/320 refuse a
 * `wait` over 60, and 55 stays under the 60 s idle timeout common in proxies.
 */
export const LEGACY_DOWNLINK_WAIT_S = 55;
/**
 * Answer header of a downlink pull the server held open as asked (`wait`): the seconds it held it, and
 * since docs/decisions/320-bytes-on-a-costly-link.md the longest it grants, `<s>;max=<longest>`. Older
 * clients read only that the header is there. A server that states `max` also answers a conditional pull
 * (`If-None-Match: "<cursor>"`, the cursor sent as `after`) that found nothing with a bare 304.
 */
export const HELD_HEADER = 'driftline-held';

/**
 * {@link HELD_HEADER}'s value: seconds held, and the longest hold the server grants (absent: an older one).
 * `keep` (docs/decisions/340-no-gap-between-held-pulls.md): the server keeps up to that many held pulls
 * of one client and site, wakes only the one that ends first when downlink arrives, and answers an older
 * one empty once a newer one arrives: `<s>;keep=<n>;max=<longest>` (before `max`, which older clients
 * read at the end).
 */
export function formatHeld(heldS: number, maxS: number, keep?: number): string {
  return keep === undefined ? `${heldS};max=${maxS}` : `${heldS};keep=${keep};max=${maxS}`;
}

/** Reads {@link HELD_HEADER}'s seconds held and `keep` (1 when absent: an older server keeps one). */
export function parseHeld(value: string | null): { heldS: number; keep: number } | null {
  const m = /^(\d{1,5})(?:;keep=(\d{1,2}))?(?:;max=\d{1,6})?$/.exec(value ?? '');
  if (!m) return null;
  return { heldS: Number(m[1]), keep: m[2] === undefined ? 1 : Math.max(1, Number(m[2])) };
}

/** Reads {@link HELD_HEADER}: the longest hold stated, or null (absent, an older server, or garbage). */
export function parseHeldMax(value: string | null): number | null {
  const m = /;max=(\d{1,6})$/.exec(value ?? '');
  if (!m) return null;
  const max = Number(m[1]);
  return max >= 0 && max <= MAX_DOWNLINK_WAIT_S ? max : null;
}

/**
 * Two downlink cursors compared (-1, 0 or 1, as `a` is before, at or after `b`) when both are decimal (as
 * relays and the hub give them), else null: an opaque cursor cannot be ordered (docs/decisions/340-no-gap-between-held-pulls.md).
 */
export function compareDecimalCursors(a: string, b: string): number | null {
  if (!DECIMAL_CURSOR.test(a) || !DECIMAL_CURSOR.test(b)) return null;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
const DECIMAL_CURSOR = /^\d{1,30}$/;

/**
 * Request header of a held downlink pull naming who holds it (the agent, within its bearer token's peer):
 * a server that states `keep` keeps that many held pulls per holder and site, and holds a pull that would
 * only find again what it answered that holder last (docs/decisions/340-no-gap-between-held-pulls.md).
 * Absent: each pull stands alone, as before.
 */
export const HOLDER_HEADER = 'driftline-holder';
/** A {@link HOLDER_HEADER} value: an agent name. */
export const HOLDER_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** Response header carrying the cursor to pass as `after` next time. */
export const CURSOR_HEADER = 'driftline-cursor';

export const HealthSchema = z.object({
  ok: z.boolean(),
  role: z.enum(['relay', 'hub']),
  name: z.string(),
  version: z.string(),
  time: z.number().int(),
});
export type Health = z.infer<typeof HealthSchema>;

/** `GET /v1/peer`: who the bearer token is at this node, and the sites it acts for (`*`: any). */
export const PEER_PATH = '/v1/peer';
export const PeerInfoSchema = z.object({
  name: z.string().max(128),
  sites: z.array(z.string().max(128)).max(10_000),
  /** The hop versions this node speaks (`[1, 2]`, decision 495); absent: 1 only (an older node). */
  wire: z.array(z.number().int()).max(8).optional(),
  /**
   * The hub's v2 messages other than acks this node carries down to its sites (`['publication']`,
   * docs/decisions/505-compact-publications.md): the hub always; a relay while every upstream says so.
   */
  carries: z.array(z.string().max(40)).max(16).optional(),
  /**
   * The compact forms of an agent's v2 push every node from here to the hub reads (`['blob-list',
   * 'changes-dz1']`, docs/decisions/510-compact-blob-announcements.md): the hub all it reads; a relay those
   * every upstream states that it reads itself. A field of its own, not `carries`: a relay older than it
   * passed every `carries` name on, and would refuse the pushes.
   */
  pushForms: z.array(z.string().max(40)).max(16).optional(),
  /**
   * The longest this node holds a downlink watch (`POST /v1/downlink/watch`), seconds
   * (docs/decisions/620-one-watch-for-all-sites.md): a hub. Absent: no watch here (a relay, an older hub);
   * its downlink is pulled site by site every pull interval.
   */
  watchS: z.number().int().min(1).max(86_400).optional(),
});
export type PeerInfo = z.infer<typeof PeerInfoSchema>;

/**
 * `POST /v1/downlink/watch` (peer token): one held request for all of a relay's sites. The body names each
 * site with the cursor the relay holds for it; the answer names the sites with downlink after that cursor,
 * at once when some have, else when the first arrives or `wait` passes (docs/decisions/620-one-watch-for-all-sites.md).
 */
export const DOWNLINK_WATCH_PATH = '/v1/downlink/watch';
/** Most sites one watch names (a relay's sites, as `PeerInfo.sites`). */
export const MAX_WATCH_SITES = 10_000;
/** Largest watch body read, bytes: 10,000 sites of 128 characters with 20-digit cursors fit. */
export const MAX_WATCH_BYTES = 2 * 1024 * 1024;
export const DownlinkWatchSchema = z.object({
  /** Seconds to hold while no site has news; the node holds at most its `watchS`. 0: only ask. */
  wait: z.number().int().min(0).max(86_400),
  /** Site → the cursor the watcher holds for it (`'0'`: none yet). */
  sites: z
    .record(SiteIdSchema, z.string().regex(/^[0-9]{1,20}$/, 'cursor is the decimal number a pull answered'))
    .refine((r) => Object.keys(r).length <= MAX_WATCH_SITES, `at most ${MAX_WATCH_SITES} sites`),
});
export type DownlinkWatch = z.infer<typeof DownlinkWatchSchema>;
export const DownlinkWatchAnswerSchema = z.object({
  /** Sites with downlink after the cursor the watch named: pull these. */
  sites: z.array(z.string().max(128)).max(MAX_WATCH_SITES),
  /** Sites named that this peer may not pull for (not watched; `GET /v1/bundles` says why). */
  refused: z.array(z.string().max(128)).max(MAX_WATCH_SITES),
});
export type DownlinkWatchAnswer = z.infer<typeof DownlinkWatchAnswerSchema>;

/** `POST /v1/status`: a relay's own health, sent upstream with its peer token (shown at the hub). */
export const STATUS_PATH = '/v1/status';
/** Largest `POST /v1/status` body read, bytes. */
export const MAX_STATUS_BYTES = 64 * 1024;
export const RelayStatusSchema = z.object({
  /** The relay's clock when it made the status, ms since the epoch. */
  at: z.number().int().nonnegative(),
  version: z.string().max(64),
  custody: z.object({
    bundles: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative(),
    /** When the oldest bundle still held was taken in (relay clock), or null when none is held. */
    oldestAt: z.number().int().nonnegative().nullable(),
  }),
  /** Bundles the relay's upstreams refused for good since it started, by error code. */
  upstreamRefusals: z.record(z.string().max(64), z.number().int().nonnegative()),
  /** Sites whose bundles an upstream refused because this relay's token does not act for them. */
  sitesRefused: z.array(z.string().max(128)).max(256),
  /** The sites the relay pulls downlink for, as it learned them (relay.yaml and the hub). */
  sites: z.array(z.string().max(128)).max(10_000),
  upstreams: z
    .array(
      z.object({
        name: z.string().max(128),
        /** The last exchange with it worked. */
        ok: z.boolean(),
        /** The last failure's code and message, when the last exchange failed. */
        code: z.string().max(64).nullable(),
        message: z.string().max(500).nullable(),
      }),
    )
    .max(32),
});
export type RelayStatus = z.infer<typeof RelayStatusSchema>;

/**
 * Response header of `GET /v1/bundles` at a relay: bundles of the site's agents its upstream refused for
 * good (base64url of a JSON `RelayRefusal[]`), so the agent shows what to fix and sends them again after
 * `sync.rejectedRetryS` instead of `resendAfterS` (docs/decisions/240-peers-and-relay-health.md).
 */
export const REFUSALS_HEADER = 'driftline-refusals';
/** Largest `REFUSALS_HEADER` value read, characters. */
export const MAX_REFUSALS_HEADER = 16 * 1024;
export const RelayRefusalSchema = z.object({
  site: SiteIdSchema,
  agent: AgentIdSchema,
  code: z.string().regex(/^[a-z][a-z0-9-]{0,63}$/),
  bundleIds: z.array(BundleIdSchema).min(1).max(20),
  count: z.number().int().positive(),
  /** The relay's clock at the first and latest refusal, ms since the epoch. */
  firstAt: z.number().int().nonnegative(),
  lastAt: z.number().int().nonnegative(),
  /** The relay that was refused, and who refused (the upstream's receipt `by`). */
  relay: z.string().max(128),
  by: z.string().max(128),
  message: z.string().max(300),
});
export type RelayRefusal = z.infer<typeof RelayRefusalSchema>;
export const RelayRefusalsSchema = z.array(RelayRefusalSchema).max(16);
