import { readFileSync } from 'node:fs';
import { SiteIdSchema } from '@driftline/protocol';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { ContactPlan } from './core/contactPlan.js';
import { parseCron } from './core/cron.js';

const Cron = z.string().transform((s, ctx) => {
  const r = parseCron(s);
  if (!r.ok) {
    ctx.addIssue({ code: 'custom', message: r.error });
    return z.NEVER;
  }
  return r.value;
});

const UpstreamSchema = z
  .strictObject({
    name: z.string().min(1).optional(),
    url: z.url().transform((u) => u.replace(/\/+$/, '')),
    /** The bearer token the upstream issued for this relay, inline or from a file or variable. */
    token: z.string().min(1).optional(),
    tokenFile: z.string().optional(),
    tokenEnv: z.string().optional(),
    contact: z
      .strictObject({
        windows: z
          .array(z.strictObject({ cron: Cron, durationMinutes: z.number().int().min(1).max(1440) }))
          .default([]),
        bytesPerWindow: z.number().int().positive().optional(),
        bytesPerDay: z.number().int().positive().optional(),
      })
      .default({ windows: [] }),
  })
  .refine((u) => [u.token, u.tokenFile, u.tokenEnv].filter(Boolean).length === 1, {
    message: 'give exactly one of token, tokenFile, tokenEnv',
  });

export const RelayConfigSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'name is a slug like relay-1'),
  dataDir: z.string().min(1),
  listen: z.strictObject({ host: z.string().default('127.0.0.1'), port: z.number().int().min(0).max(65535) }),
  storage: z
    .strictObject({
      /**
       * Most bytes the relay keeps on disk: its SQLite file, blobs in custody, bundles to outposts and
       * the whole `Upload-Length` of every upload in progress. Past it a batch is answered 507
       * `insufficient-storage` with nothing stored, and a tus creation that would pass it is refused
       * with 507. Unset: only the disk's own size limits it.
       */
      maxBytes: z.number().int().positive().optional(),
    })
    .default({}),
  limits: z
    .strictObject({
      /** Largest `POST /v1/bundles` body, compressed and inflated, in bytes (413 above). */
      maxBatchBytes: z
        .number()
        .int()
        .positive()
        .default(8 * 1024 * 1024),
      /** Largest tus upload, bytes (413 at creation). */
      maxUploadBytes: z
        .number()
        .int()
        .positive()
        .default(2 * 1024 ** 3),
      /** An upload untouched this long is removed, hours. */
      uploadExpiryHours: z.number().positive().default(168),
      /**
       * Most uplink bundles one downstream peer (one token name) may have held here at once. A batch that
       * would pass it is answered 429 `too-many-requests` with `Retry-After: retryAfterS`, nothing stored;
       * the peer retries once the relay has forwarded some. Counted in `driftline_relay_peer_refusals_total`.
       */
      peerMaxBundles: z.number().int().positive().default(100_000),
      /**
       * Most bytes one downstream peer may have held here: its uplink bundles, its blobs in custody and
       * its uploads in progress. Past it a batch or a tus creation is answered 507 `insufficient-storage`.
       */
      peerMaxBytes: z
        .number()
        .int()
        .positive()
        .default(8 * 1024 ** 3),
      /** `Retry-After` of a 429 for a peer over `peerMaxBundles`, seconds. */
      retryAfterS: z.number().int().positive().default(60),
      /**
       * Most connections open at once from one client address; the next is answered 429 and closed.
       * Behind a reverse proxy every client shares its address: raise it there.
       */
      maxConnectionsPerClient: z.number().int().positive().default(64),
      /** How long a client may take to send its request headers, ms (408 after). */
      headersTimeoutMs: z.number().int().positive().default(60_000),
      /**
       * Largest response body read from an upstream (a downlink page, receipts), after decompression,
       * in bytes: a compressed bomb from a hostile upstream stops here.
       */
      maxResponseBytes: z
        .number()
        .int()
        .positive()
        .default(64 * 1024 * 1024),
    })
    .prefault({}),
  /** `GET /metrics`: Prometheus text. */
  metrics: z
    .strictObject({
      /**
       * Serve `/metrics` without credentials, for a closed network. Default false: a scraper presents a
       * peer token or a metrics-only one (`relay token add prometheus --metrics`).
       */
      public: z.boolean().default(false),
    })
    .prefault({}),
  /** Bundles to outposts: one copy per blob for all sites, fetched with Range, within a disk quota. */
  bundles: z
    .strictObject({
      quotaBytes: z
        .number()
        .int()
        .positive()
        .default(20 * 1024 ** 3),
      chunkBytes: z
        .number()
        .int()
        .positive()
        .default(1024 * 1024),
      intervalMs: z.number().int().positive().default(5000),
    })
    .default({ quotaBytes: 20 * 1024 ** 3, chunkBytes: 1024 * 1024, intervalMs: 5000 }),
  /** Sites whose downlink this relay pulls from upstream and holds. */
  sites: z.array(SiteIdSchema).default([]),
  upstreams: z.array(UpstreamSchema).default([]),
  forward: z
    .strictObject({
      batchBytes: z
        .number()
        .int()
        .positive()
        .default(1024 * 1024),
      batchCount: z.number().int().positive().default(500),
      backoffBaseMs: z.number().int().positive().default(1000),
      backoffMaxMs: z.number().int().positive().default(300_000),
      idleMs: z.number().int().positive().default(5000),
      requestTimeoutMs: z.number().int().positive().default(120_000),
      pullIntervalMs: z.number().int().positive().default(10_000),
    })
    .default({
      batchBytes: 1024 * 1024,
      batchCount: 500,
      backoffBaseMs: 1000,
      backoffMaxMs: 300_000,
      idleMs: 5000,
      requestTimeoutMs: 120_000,
      pullIntervalMs: 10_000,
    }),
});
export type RelayConfigInput = z.input<typeof RelayConfigSchema>;
export type RelayConfig = z.output<typeof RelayConfigSchema>;

export interface ResolvedUpstream {
  name: string;
  url: string;
  token: string;
  plan: ContactPlan;
}

/** Parses a config object; errors are a readable list, one line per problem. */
export function parseConfig(
  raw: unknown,
): { ok: true; value: RelayConfig } | { ok: false; errors: string[] } {
  const r = RelayConfigSchema.safeParse(raw);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, errors: r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`) };
}

export function loadConfigFile(
  path: string,
): { ok: true; value: RelayConfig } | { ok: false; errors: string[] } {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    return { ok: false, errors: [`${path}: ${(e as Error).message}`] };
  }
  return parseConfig(raw);
}

export function resolveUpstreams(
  cfg: RelayConfig,
  env: NodeJS.ProcessEnv,
): { ok: true; value: ResolvedUpstream[] } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const value = cfg.upstreams.map((u, i) => {
    let token = u.token ?? '';
    if (u.tokenFile) {
      try {
        token = readFileSync(u.tokenFile, 'utf8').trim();
      } catch (e) {
        errors.push(`upstreams.${i}.tokenFile: ${(e as Error).message}`);
      }
    }
    if (u.tokenEnv) {
      token = env[u.tokenEnv] ?? '';
      if (!token) errors.push(`upstreams.${i}.tokenEnv: variable ${u.tokenEnv} is not set`);
    }
    return { name: u.name ?? new URL(u.url).host, url: u.url, token, plan: u.contact };
  });
  return errors.length ? { ok: false, errors } : { ok: true, value };
}
