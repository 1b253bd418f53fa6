import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { RoleSchema } from '@driftline/protocol';
import { parse } from 'yaml';
import { z } from 'zod';
import { isAddressOrCidr } from './adapters/http/addresses.js';

/** One address to listen on. */
const AddressSchema = z.strictObject({
  /** Interface to bind; `0.0.0.0` or `::` for every interface. */
  host: z.string().default('127.0.0.1'),
  /** TCP port; 0 picks a free one. */
  port: z.number().int().min(0).max(65535).default(8080),
});
export type ListenAddress = z.infer<typeof AddressSchema>;

/**
 * Where the hub listens: one address for everything (`{ host, port }`), or the hop API apart from the
 * people's side (`{ hop, api }`) so relays can be given an address that serves nothing else.
 */
const ListenSchema = z.union([
  AddressSchema,
  z.strictObject({
    /** The hop API relays and agents use: `/v1/bundles`, `/v1/uploads`, `/v1/blobs`, `/v1/health`. */
    hop: AddressSchema,
    /** `/api`, `/api/events`, the dashboard, sign-in, `/metrics` and `/v1/health`. */
    api: AddressSchema,
  }),
]);

const GiB = 1024 ** 3;

/** How people authenticate and what `/api` accepts (DESIGN S5, S8). */
const ApiSchema = z.strictObject({
  /**
   * Opens reads (`GET /api/…`, `/api/events`, `/metrics`) without a credential, as a viewer named
   * `public`. Writes still need a role. Only for a closed network. Default false.
   */
  public: z.boolean().default(false),
  /** Largest file `POST /api/bundles` accepts, bytes (413 above). Default 2 GiB. */
  maxUploadBytes: z
    .number()
    .int()
    .positive()
    .default(2 * GiB),
  /** How long a dashboard session lasts after sign-in, hours. Default 12. */
  sessionTtlH: z
    .number()
    .positive()
    .max(24 * 90)
    .default(12),
  rateLimit: z
    .strictObject({
      /** Requests per minute one credential (or, without one, one client address) may make. Default 600. */
      perMinute: z.number().int().positive().default(600),
      /**
       * Failed sign-ins (wrong or revoked token, unknown SSO user) per minute from one client address;
       * past it every sign-in attempt from there answers 429 until the minute is over. Default 30.
       */
      failuresPerMinute: z.number().int().positive().default(30),
    })
    .default({ perMinute: 600, failuresPerMinute: 30 }),
  sso: z
    .strictObject({
      /** The identity header the SSO proxy sets, e.g. `X-Forwarded-User` (oauth2-proxy). Unset: no SSO. */
      header: z
        .string()
        .regex(/^[A-Za-z0-9-]{1,64}$/, 'an HTTP header name')
        .optional(),
      /**
       * Addresses (IPs or CIDRs) the proxy connects from. The header is believed only when the TCP peer
       * of the request is one of them (never from X-Forwarded-For); from anywhere else it is ignored.
       */
      proxies: z
        .array(z.string().refine(isAddressOrCidr, 'an IP address or CIDR, e.g. 10.0.0.5 or 10.0.0.0/24'))
        .default([]),
      /** Role given to an SSO user who was not added with `hub user add NAME --sso`. Unset: such users get 401. */
      defaultRole: RoleSchema.optional(),
    })
    .default({ proxies: [] }),
});
export type ApiConfig = z.infer<typeof ApiSchema>;

/** `hub.yaml`. Paths are relative to the file. Environment: HUB_WEBHOOK_SECRET, LOG_LEVEL. */
export const HubConfigSchema = z.strictObject({
  /** Where to listen; see {@link ListenSchema}. Default one address, 127.0.0.1:8080. */
  listen: ListenSchema.default({ host: '127.0.0.1', port: 8080 }),
  /** Authentication, limits and SSO of the people's side. */
  api: ApiSchema.default({
    public: false,
    maxUploadBytes: 2 * GiB,
    sessionTtlH: 12,
    rateLimit: { perMinute: 600, failuresPerMinute: 30 },
    sso: { proxies: [] },
  }),
  /** The store, the hub key, the CSRF key, blobs and uploads. */
  dataDir: z.string().default('./hub-data'),
  /** The built dashboard; served at `/` when it exists. */
  uiDir: z.string().default('../ui/dist'),
  /** Expected contact interval for sites whose agents declare none, seconds. */
  defaultContactIntervalS: z.number().positive().nullable().default(3600),
  /** How long a plan request waits for its site before it expires, seconds. */
  planRequestTtlS: z.number().int().positive().default(3600),
  /** How often staleness, expiry, webhooks and retention are checked, seconds. */
  sweepIntervalS: z.number().positive().default(15),
  retention: z
    .strictObject({
      /** Runs kept per cell, newest first (failures within `failureMaxAgeDays` are kept regardless). */
      maxRunsPerCell: z.number().int().positive().default(500),
      /** Runs and cell history older than this go. */
      maxAgeDays: z.number().positive().default(90),
      /** Failures, and audit log entries, are kept this long. */
      failureMaxAgeDays: z.number().positive().default(365),
    })
    .default({ maxRunsPerCell: 500, maxAgeDays: 90, failureMaxAgeDays: 365 }),
  ingest: z
    .strictObject({
      /**
       * Worker threads that merge agent documents (Automerge), beside the thread that verifies, writes
       * SQLite and serves HTTP. 0 merges in that thread.
       */
      mergeWorkers: z.number().int().min(0).max(16).default(1),
    })
    .default({ mergeWorkers: 1 }),
  /** Bounds on what relays and agents send through the hop API (DESIGN S8). */
  limits: z
    .strictObject({
      /** Largest `POST /v1/bundles` body, compressed and inflated, bytes (413 above). */
      maxBatchBytes: z
        .number()
        .int()
        .positive()
        .default(8 * 1024 * 1024),
      /** Largest tus upload (a plan's redacted detail), bytes (413 at creation). */
      maxUploadBytes: z
        .number()
        .int()
        .positive()
        .default(2 * GiB),
      /** Open connections one client address may hold; the next is answered 429 and closed. */
      maxConnectionsPerClient: z.number().int().positive().default(64),
      /** A request's headers must arrive within this, ms (408 and closed otherwise). */
      headersTimeoutMs: z.number().int().positive().default(60_000),
    })
    .default({
      maxBatchBytes: 8 * 1024 * 1024,
      maxUploadBytes: 2 * GiB,
      maxConnectionsPerClient: 64,
      headersTimeoutMs: 60_000,
    }),
  /** Disk the hub may use under `dataDir`. */
  storage: z
    .strictObject({
      /**
       * Bytes of `dataDir` (store, blobs, published files, uploads in progress counted at their full
       * length). Past it, uploads and bundle batches are refused with 507 and nothing is stored; reads go on.
       * Unset: no cap beyond the disk itself.
       */
      maxBytes: z.number().int().positive().optional(),
    })
    .default({}),
  webhooks: z
    .strictObject({
      /** Where transitions (new drift, stale cell, unreachable site) are POSTed. */
      urls: z.array(z.url()).default([]),
      /** HMAC key of webhook bodies (or HUB_WEBHOOK_SECRET); needed when `urls` is not empty. */
      secret: z.string().min(16).optional(),
    })
    .default({ urls: [] }),
});
export type HubConfig = z.infer<typeof HubConfigSchema> & { configDir: string; webhookSecret: string | null };

/** The listeners a configuration asks for: one shared address, or the hop API apart from the rest. */
export function listenersOf(
  c: HubConfig,
): { shared: ListenAddress } | { hop: ListenAddress; api: ListenAddress } {
  return 'hop' in c.listen ? { hop: c.listen.hop, api: c.listen.api } : { shared: c.listen };
}

export type ConfigResult = { ok: true; config: HubConfig } | { ok: false; errors: string[] };

export function parseConfig(raw: unknown, configDir: string, env: NodeJS.ProcessEnv): ConfigResult {
  const r = HubConfigSchema.safeParse(raw ?? {});
  if (!r.success)
    return { ok: false, errors: r.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`) };
  const sso = r.data.api.sso;
  if (sso.header && sso.proxies.length === 0)
    return {
      ok: false,
      errors: ['api.sso.proxies: list the addresses the SSO proxy connects from, or remove api.sso.header'],
    };
  if (!sso.header && (sso.proxies.length > 0 || sso.defaultRole))
    return { ok: false, errors: ['api.sso.header: name the identity header the SSO proxy sets'] };
  const secret = env.HUB_WEBHOOK_SECRET ?? r.data.webhooks.secret ?? null;
  if (r.data.webhooks.urls.length > 0 && !secret) {
    return {
      ok: false,
      errors: ['webhooks.secret: set it (16+ characters) or HUB_WEBHOOK_SECRET, to sign webhook bodies'],
    };
  }
  const c = r.data;
  return {
    ok: true,
    config: {
      ...c,
      dataDir: resolve(configDir, c.dataDir),
      uiDir: resolve(configDir, c.uiDir),
      configDir,
      webhookSecret: secret,
    },
  };
}

export function loadConfig(path: string | undefined, env: NodeJS.ProcessEnv): ConfigResult {
  if (!path) return parseConfig({}, process.cwd(), env);
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, 'utf8'));
  } catch (e) {
    return { ok: false, errors: [`${path}: ${(e as Error).message}`] };
  }
  return parseConfig(raw, dirname(resolve(path)), env);
}
