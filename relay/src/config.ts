import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  checkConfig,
  PUBLICATIONS_KEY,
  parseYamlText,
  renamedKeyProblem,
  renamedKeyWarning,
} from '@driftline/hop/config';
import { parseWindow, SiteIdSchema, type WindowSpec } from '@driftline/protocol';
import { z } from 'zod';
import { ForwardSchema, LimitsSchema, PublicationsSchema } from './configSections.js';
import type { ContactPlan } from './core/contactPlan.js';

/**
 * One contact window, in the syntax the hub and the agent read (`0 *\/2 * * * for 10m`, `every 90m for
 * 8m from …`; protocol's contactWindows.ts), or in the relay's older spelling `{ cron, durationMinutes }`,
 * read as `<cron> for <n>m` with a warning (docs/decisions/431-one-window-syntax.md).
 */
const WindowEntry = z
  .union([
    z
      .string()
      .max(200)
      .describe(
        "A window: '0 */2 * * * for 10m' (cron, UTC, and how long it stays open), 'every 90m for 8m from 2026-11-27T00:00:00Z' or '2026-11-27T14:00:00Z for 8m'.",
      ),
    z
      .strictObject({
        cron: z
          .string()
          .describe('When a window opens: cron, 5 fields (minute hour day month weekday), UTC.'),
        durationMinutes: z
          .number()
          .int()
          .min(1)
          .max(1440)
          .describe('How long the window stays open, minutes.'),
      })
      .describe("Deprecated spelling of '<cron> for <durationMinutes>m', read with a warning."),
  ])
  .transform((w, ctx): { spec: WindowSpec; oldSpelling: string | null } => {
    const text = typeof w === 'string' ? w : `${w.cron} for ${w.durationMinutes}m`;
    const r = parseWindow(text);
    if (!r.ok) {
      ctx.addIssue({
        code: 'custom',
        message: `${r.error} (see docs/configuration.md, upstreams[].contact)`,
      });
      return z.NEVER;
    }
    return { spec: r.value, oldSpelling: typeof w === 'string' ? null : text };
  });

const UpstreamSchema = z
  .strictObject({
    name: z.string().min(1).optional().describe("Name in logs and metrics; default the URL's host:port."),
    url: z
      .url()
      .transform((u) => u.replace(/\/+$/, ''))
      .describe("Base URL of the hub's hop API (listen.hop in hub.yaml) or of another relay."),
    token: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The bearer token that upstream issued for this relay (`hub peer`), inline; prefer tokenFile.',
      ),
    tokenFile: z.string().optional().describe('File holding that token, relative to this file.'),
    tokenEnv: z.string().optional().describe('Environment variable holding that token.'),
    contact: z
      .strictObject({
        windows: z
          .array(WindowEntry)
          .prefault([])
          .describe(
            'When the link to this upstream is expected up; none means always (forwarding is tried at any time).',
          ),
        bytesPerWindow: z
          .number()
          .int()
          .positive()
          .optional()
          .describe('Most bytes forwarded per window; default no cap.'),
        bytesPerDay: z
          .number()
          .int()
          .positive()
          .optional()
          .describe('Most bytes forwarded per UTC day; default no cap.'),
      })
      .prefault({})
      .transform(({ windows, ...budgets }) => ({
        ...budgets,
        windows: windows.map((w) => w.spec),
        /** Windows written in the deprecated object spelling, as the text that replaces them. */
        oldSpellings: windows.flatMap((w) => (w.oldSpelling ? [w.oldSpelling] : [])),
      }))
      .describe('Contact plan: windows and byte budgets of a costly or scheduled link.'),
  })
  .refine((u) => [u.token, u.tokenFile, u.tokenEnv].filter(Boolean).length === 1, {
    message: 'give exactly one of token, tokenFile, tokenEnv',
  })
  .describe('One upstream; give exactly one of token, tokenFile, tokenEnv.');

/** `relay.yaml`. Relative paths resolve from the file's folder (O1 in docs/architecture.md#invariants). Environment: LOG_LEVEL. */
export const RelayConfigSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'a slug like relay-1')
      .describe("This relay's name (a slug like relay-1), in receipts, logs and metrics."),
    dataDir: z
      .string()
      .min(1)
      .describe('Where the relay keeps its SQLite store, blobs and uploads, relative to this file.'),
    listen: z
      .strictObject({
        host: z
          .string()
          .default('127.0.0.1')
          .describe('Interface to bind; 0.0.0.0 or :: for every interface.'),
        port: z
          .number()
          .int()
          .min(0)
          .max(65535)
          .describe('TCP port agents and downstream relays reach; 0 picks one.'),
      })
      .describe('Where the hop API listens for agents and downstream relays.'),
    storage: z
      .strictObject({
        maxBytes: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            'Most bytes on disk (store, blobs, publications, uploads at full length); past it 507. Default: the disk.',
          ),
      })
      .default({})
      .describe('Disk the relay may use.'),
    limits: LimitsSchema,
    metrics: z
      .strictObject({
        public: z
          .boolean()
          .default(false)
          .describe(
            'Serve /metrics without a token (closed networks only); default a peer token or `relay token add NAME --metrics`.',
          ),
      })
      .prefault({})
      .describe('GET /metrics (Prometheus text).'),
    publications: PublicationsSchema.default({
      quotaBytes: 20 * 1024 ** 3,
      chunkBytes: 1024 * 1024,
      intervalMs: 5000,
    }).describe(
      'Publications (files from headquarters): fetched once with Range, kept for the sites within a quota.',
    ),
    bundles: PublicationsSchema.optional().describe(
      'Deprecated: the name of `publications` before decision 170, read for one version with a warning.',
    ),
    sites: z
      .array(SiteIdSchema)
      .default([])
      .describe(
        'Sites whose downlink (acks, plan requests, publications, approvals) this relay pulls from upstream and holds; empty holds none.',
      ),
    upstreams: z
      .array(UpstreamSchema)
      // prefault, not default: a default is an output value, which JSON Schema cannot show past a transform
      .prefault([])
      .describe('Where custody goes: the hub, or another relay; tried in order.'),
    forward: ForwardSchema,
  })
  .describe('Driftline relay configuration (relay.yaml).');
export type RelayConfigInput = z.input<typeof RelayConfigSchema>;
export type RelayConfig = z.output<typeof RelayConfigSchema>;

export interface ResolvedUpstream {
  name: string;
  url: string;
  token: string;
  plan: ContactPlan;
}

/**
 * Parses a config object; errors are a readable list, one line per problem. Relative paths (`dataDir`,
 * `upstreams[].tokenFile`) resolve from `configDir`, the folder of the file they came from (O1 in docs/architecture.md#invariants);
 * a caller without a file passes the folder it means.
 */
export function parseConfig(
  raw: unknown,
  configDir: string = process.cwd(),
): { ok: true; value: RelayConfig } | { ok: false; errors: string[] } {
  const r = checkConfig(RelayConfigSchema, raw);
  if (!r.ok) return { ok: false, errors: r.problems };
  const c = r.value;
  const both = renamedKeyProblem(raw, PUBLICATIONS_KEY);
  if (both) return { ok: false, errors: [both] };
  return {
    ok: true,
    value: {
      ...c,
      publications: c.bundles ?? c.publications,
      dataDir: resolve(configDir, c.dataDir),
      upstreams: c.upstreams.map((u) =>
        u.tokenFile ? { ...u, tokenFile: resolve(configDir, u.tokenFile) } : u,
      ),
    },
  };
}

/** Reads `relay.yaml` and parses it, paths resolved from its folder. */
export function loadConfigFile(
  path: string,
): { ok: true; value: RelayConfig } | { ok: false; errors: string[] } {
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
  return parseConfig(y.raw, dirname(resolve(path)));
}

/**
 * Defaults and settings that leave a function off (O3 in docs/architecture.md#invariants): `relay run` logs each as a warning and
 * `relay config check` prints it. None is an error.
 */
export function configWarnings(cfg: RelayConfig): string[] {
  const w: string[] = [];
  if (cfg.bundles) w.push(renamedKeyWarning(PUBLICATIONS_KEY));
  cfg.upstreams.forEach((u, i) => {
    for (const text of u.contact.oldSpellings)
      w.push(
        `upstreams[${i}].contact.windows: { cron, durationMinutes } is deprecated (decision 431); write '${text}' (the window syntax of hub and agent), read as such for now`,
      );
  });
  if (cfg.sites.length === 0)
    w.push(
      'sites is empty: this relay holds no downlink, so acks, plan requests, publications and approvals will not reach agents behind it (agents then resend what the hub already has); list the sites it serves',
    );
  if (cfg.upstreams.length === 0)
    w.push(
      'upstreams is empty: bundles taken into custody here are never forwarded; name the hub or a relay',
    );
  return w;
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
        if (!token)
          errors.push(
            `upstreams[${i}].tokenFile: ${u.tokenFile} is empty (put the token \`hub peer\` printed in it)`,
          );
      } catch (e) {
        errors.push(`upstreams[${i}].tokenFile: ${(e as Error).message}`);
      }
    }
    if (u.tokenEnv) {
      token = env[u.tokenEnv] ?? '';
      if (!token) errors.push(`upstreams[${i}].tokenEnv: variable ${u.tokenEnv} is not set`);
    }
    const { oldSpellings: _, ...plan } = u.contact;
    return { name: u.name ?? new URL(u.url).host, url: u.url, token, plan };
  });
  return errors.length ? { ok: false, errors } : { ok: true, value };
}
