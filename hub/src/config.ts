import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hopLimitFields } from '@driftline/hop';
import { checkConfig, parseYamlText } from '@driftline/hop/config';
import { RoleSchema } from '@driftline/protocol';
import { z } from 'zod';
import { isAddressOrCidr } from './adapters/http/addresses.js';
import { ContactPlansConfigSchema } from './configContact.js';

/** One address to listen on. */
const AddressSchema = z.strictObject({
  host: z.string().default('127.0.0.1').describe('Interface to bind; 0.0.0.0 or :: for every interface.'),
  port: z.number().int().min(0).max(65535).default(8080).describe('TCP port; 0 picks a free one.'),
});
export type ListenAddress = z.infer<typeof AddressSchema>;

/**
 * Where the hub listens: one address for everything (`{ host, port }`), or the hop API apart from the
 * people's side (`{ hop, api }`) so relays can be given an address that serves nothing else.
 */
const ListenSchema = z.union([
  AddressSchema.describe('One address for the hop API, /api, the dashboard and /metrics.'),
  z
    .strictObject({
      hop: AddressSchema.describe(
        'The hop API relays and agents reach: /v1/bundles, /v1/uploads, /v1/blobs, /v1/health.',
      ),
      api: AddressSchema.describe('People: /api, /api/events, the dashboard, sign-in, /metrics, /v1/health.'),
    })
    .describe("Two addresses: the hop API apart from the people's side."),
]);

const GiB = 1024 ** 3;

/** Where the hub keeps its state (C2 in docs/architecture.md#invariants). */
const StoreSchema = z.strictObject({
  kind: z
    .enum(['sqlite', 'postgres'])
    .default('sqlite')
    .describe(
      'sqlite: hub.db and bundles.db (publications) in dataDir, for one hub process; postgres: a PostgreSQL 15+ database at url.',
    ),
  url: z
    .string()
    .regex(
      /^postgres(ql)?:\/\//,
      'a postgres:// URL, e.g. postgres://driftline@db.example.org:5432/driftline',
    )
    .optional()
    .describe(
      'postgres://user@host:port/database (kind postgres), no password: it comes from passwordFile or passwordEnv.',
    ),
  passwordFile: z
    .string()
    .optional()
    .describe("File holding the database user's password (its first line), relative to this file."),
  passwordEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
    .optional()
    .describe(
      "Environment variable holding the database user's password. Neither set: PGPASSWORD or ~/.pgpass, as libpq.",
    ),
  maxConnections: z
    .number()
    .int()
    .min(2)
    .max(500)
    .optional()
    .describe(
      "Most pooled connections this hub process opens (kind postgres; default 10). Keep the sum over all hubs, plus one listener (live events and downlink) and one leader connection each, under the server's max_connections.",
    ),
});
export type StoreConfig = z.infer<typeof StoreSchema>;

/** How people authenticate and what `/api` accepts (S5, S8 in docs/architecture.md#invariants). */
const ApiSchema = z.strictObject({
  public: z
    .boolean()
    .default(false)
    .describe(
      'Open reads (GET /api, /api/events, /metrics) without a credential; writes still need a role. Closed networks only.',
    ),
  maxUploadBytes: z
    .number()
    .int()
    .positive()
    .default(2 * GiB)
    .describe('Largest file POST /api/publications accepts, bytes (413 above).'),
  sessionTtlH: z
    .number()
    .positive()
    .max(24 * 90)
    .default(12)
    .describe('How long a dashboard session lasts after sign-in, hours.'),
  rateLimit: z
    .strictObject({
      perMinute: z
        .number()
        .int()
        .positive()
        .default(600)
        .describe(
          'Requests per minute one credential (or, without one, one client address) may make; 429 past it.',
        ),
      failuresPerMinute: z
        .number()
        .int()
        .positive()
        .default(30)
        .describe(
          'Failed sign-ins per minute from one client address before every attempt from there gets 429.',
        ),
    })
    .default({ perMinute: 600, failuresPerMinute: 30 })
    .describe('Rate limits of /api.'),
  sso: z
    .strictObject({
      header: z
        .string()
        .regex(/^[A-Za-z0-9-]{1,64}$/, 'an HTTP header name')
        .optional()
        .describe('Identity header the SSO proxy sets, e.g. X-Forwarded-User (oauth2-proxy); unset: no SSO.'),
      proxies: z
        .array(z.string().refine(isAddressOrCidr, 'an IP address or CIDR, e.g. 10.0.0.5 or 10.0.0.0/24'))
        .default([])
        .describe('IPs or CIDRs the proxy connects from; the header is ignored from every other address.'),
      defaultRole: RoleSchema.optional().describe(
        'Role of an SSO user not added with `hub user add NAME --sso`; unset: such users get 401.',
      ),
    })
    .default({ proxies: [] })
    .describe('Sign-in through a reverse proxy that sets an identity header.'),
});
export type ApiConfig = z.infer<typeof ApiSchema>;

/** The dashboard that ships with this hub: `ui/dist` beside the hub package, wherever it is installed. */
export const BUNDLED_UI_DIR = fileURLToPath(new URL('../../ui/dist', import.meta.url));

/** `hub.yaml`. Paths are relative to the file (O1 in docs/architecture.md#invariants). Environment: HUB_WEBHOOK_SECRET, LOG_LEVEL. */
export const HubConfigSchema = z
  .strictObject({
    listen: ListenSchema.default({ host: '127.0.0.1', port: 8080 }).describe(
      'Where to listen: { host, port } for everything, or { hop, api } apart; default 127.0.0.1:8080 for both.',
    ),
    api: ApiSchema.default({
      public: false,
      maxUploadBytes: 2 * GiB,
      sessionTtlH: 12,
      rateLimit: { perMinute: 600, failuresPerMinute: 30 },
      sso: { proxies: [] },
    }).describe("Authentication, limits and SSO of the people's side (/api, dashboard, /metrics)."),
    dataDir: z
      .string()
      .default('./hub-data')
      .describe('The store, the hub key, blobs and uploads, relative to this file.'),
    store: StoreSchema.default({ kind: 'sqlite' }).describe(
      'The database: SQLite files in dataDir (the default) or PostgreSQL, where several hub processes can share it.',
    ),
    uiDir: z
      .string()
      .optional()
      .describe(
        'The built dashboard served at /, relative to this file; default the one that ships with the hub (ui/dist).',
      ),
    defaultContactIntervalS: z
      .number()
      .positive()
      .nullable()
      .default(3600)
      .describe(
        'Expected contact interval of sites whose agents declare none, seconds; null never marks them unreachable.',
      ),
    planRequestTtlS: z
      .number()
      .int()
      .positive()
      .default(3600)
      .describe('How long a plan request waits for its site before it expires, seconds.'),
    sweepIntervalS: z
      .number()
      .positive()
      .default(15)
      .describe('How often staleness, expiry, webhooks and retention are checked, seconds.'),
    contactPlans: ContactPlansConfigSchema,
    retention: z
      .strictObject({
        maxRunsPerCell: z
          .number()
          .int()
          .positive()
          .default(500)
          .describe('Runs kept per cell, newest first (recent failures are kept regardless).'),
        maxAgeDays: z
          .number()
          .positive()
          .default(90)
          .describe('Runs and cell history older than this go, days.'),
        failureMaxAgeDays: z
          .number()
          .positive()
          .default(365)
          .describe('Failures, and audit log entries, are kept this long, days.'),
        refRetentionDays: z
          .number()
          .positive()
          .default(30)
          .describe(
            "Plans of refs other than a component's default (pr/42, branches) go, with their runs, once not updated for this long, days.",
          ),
      })
      .default({ maxRunsPerCell: 500, maxAgeDays: 90, failureMaxAgeDays: 365, refRetentionDays: 30 })
      .describe('How much history the hub keeps.'),
    ingest: z
      .strictObject({
        mergeWorkers: z
          .number()
          .int()
          .min(0)
          .max(16)
          .default(1)
          .describe('Worker threads that merge agent documents; 0 merges in the thread that serves HTTP.'),
      })
      .default({ mergeWorkers: 1 })
      .describe('How bundles from agents are merged.'),
    limits: z
      .strictObject(hopLimitFields)
      .prefault({})
      .describe(
        'Bounds on what relays and agents send through the hop API (S8 in docs/architecture.md#invariants).',
      ),
    storage: z
      .strictObject({
        maxBytes: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            'Most bytes of dataDir (store, blobs, published files, uploads at full length); past it uploads and batches get 507. Default: the disk.',
          ),
      })
      .default({})
      .describe('Disk the hub may use under dataDir.'),
    webhooks: z
      .strictObject({
        urls: z
          .array(z.url())
          .default([])
          .describe('Where transitions (new drift, stale cell, unreachable site) are POSTed.'),
        secret: z
          .string()
          .min(16)
          .optional()
          .describe(
            'HMAC key of webhook bodies (or HUB_WEBHOOK_SECRET), 16+ characters; needed when urls is not empty.',
          ),
      })
      .default({ urls: [] })
      .describe('Notifications of transitions to other systems.'),
  })
  .describe('Driftline hub configuration (hub.yaml).');
export type HubConfig = Omit<z.infer<typeof HubConfigSchema>, 'uiDir'> & {
  /** Absolute: the configured one, or {@link BUNDLED_UI_DIR}. */
  uiDir: string;
  configDir: string;
  webhookSecret: string | null;
};

/** The listeners a configuration asks for: one shared address, or the hop API apart from the rest. */
export function listenersOf(
  c: HubConfig,
): { shared: ListenAddress } | { hop: ListenAddress; api: ListenAddress } {
  return 'hop' in c.listen ? { hop: c.listen.hop, api: c.listen.api } : { shared: c.listen };
}

export type ConfigResult = { ok: true; config: HubConfig } | { ok: false; errors: string[] };

/**
 * Validates a parsed hub.yaml; every problem is one line with its key path. Relative paths resolve from
 * `configDir`, the folder of the file (O1 in docs/architecture.md#invariants); `uiDir` defaults to {@link BUNDLED_UI_DIR}.
 */
export function parseConfig(raw: unknown, configDir: string, env: NodeJS.ProcessEnv): ConfigResult {
  const r = checkConfig(HubConfigSchema, raw);
  if (!r.ok) return { ok: false, errors: r.problems };
  const c = r.value;
  const errors: string[] = [];
  const sso = c.api.sso;
  if (sso.header && sso.proxies.length === 0)
    errors.push('api.sso.proxies: list the addresses the SSO proxy connects from, or remove api.sso.header');
  if (!sso.header && (sso.proxies.length > 0 || sso.defaultRole))
    errors.push('api.sso.header: name the identity header the SSO proxy sets');
  const secret = env.HUB_WEBHOOK_SECRET ?? c.webhooks.secret ?? null;
  if (c.webhooks.urls.length > 0 && !secret)
    errors.push('webhooks.secret: set it (16+ characters) or HUB_WEBHOOK_SECRET, to sign webhook bodies');
  errors.push(...storeProblems(c.store));
  if (errors.length) return { ok: false, errors };
  return {
    ok: true,
    config: {
      ...c,
      store: c.store.passwordFile
        ? { ...c.store, passwordFile: resolve(configDir, c.store.passwordFile) }
        : c.store,
      dataDir: resolve(configDir, c.dataDir),
      uiDir: c.uiDir === undefined ? BUNDLED_UI_DIR : resolve(configDir, c.uiDir),
      configDir,
      webhookSecret: secret,
    },
  };
}

/** What is wrong with `store`, one line per problem. A password in the URL is refused: it would sit in hub.yaml. */
function storeProblems(s: StoreConfig): string[] {
  if (s.kind === 'sqlite')
    return s.url || s.passwordFile || s.passwordEnv || s.maxConnections
      ? [
          'store: url, passwordFile, passwordEnv and maxConnections are for kind postgres; set kind: postgres or remove them',
        ]
      : [];
  if (!s.url) return ['store.url: kind postgres needs url: postgres://user@host:port/database'];
  const problems: string[] = [];
  let url: URL | null = null;
  try {
    url = new URL(s.url);
  } catch {
    problems.push('store.url: not a URL; write postgres://user@host:port/database');
  }
  if (url && (url.password || url.searchParams.has('password')))
    problems.push(
      'store.url: holds a password; remove it from hub.yaml and give it in a file (store.passwordFile) or an environment variable (store.passwordEnv)',
    );
  if (s.passwordFile && s.passwordEnv) problems.push('store: set passwordFile or passwordEnv, not both');
  return problems;
}

/** Reads hub.yaml (or, without a file, the defaults with paths from the working directory). */
export function loadConfig(path: string | undefined, env: NodeJS.ProcessEnv): ConfigResult {
  if (!path) return parseConfig({}, process.cwd(), env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return {
      ok: false,
      errors: [
        `${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? String(e)}); check the path given to --config`,
      ],
    };
  }
  const y = parseYamlText(text, path);
  if (!y.ok) return { ok: false, errors: y.problems };
  return parseConfig(y.raw, dirname(resolve(path)), env);
}

/**
 * Defaults and settings that leave a function off or open (O3 in docs/architecture.md#invariants): `hub run` logs each as a
 * warning and `hub config check` prints it. None is an error.
 */
export function configWarnings(c: HubConfig): string[] {
  const w: string[] = [];
  if (!existsSync(join(c.uiDir, 'index.html')))
    w.push(
      `uiDir: no dashboard at ${c.uiDir}, so / answers only a page saying how to build it (npm install at the checkout builds ui/dist; or point uiDir at a built one)`,
    );
  if (c.api.public)
    w.push('api.public is true: anyone who reaches the api listener can read without signing in');
  return w;
}
