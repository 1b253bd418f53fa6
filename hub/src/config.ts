import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';

/** `hub.yaml`. Paths are relative to the file. Environment: HUB_WEBHOOK_SECRET, LOG_LEVEL. */
export const HubConfigSchema = z.strictObject({
  listen: z
    .strictObject({
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8080),
    })
    .default({ host: '127.0.0.1', port: 8080 }),
  dataDir: z.string().default('./hub-data'),
  /** The built dashboard; served at `/` when it exists. */
  uiDir: z.string().default('../ui/dist'),
  /** Expected contact interval for sites whose agents declare none, seconds. */
  defaultContactIntervalS: z.number().positive().nullable().default(3600),
  planRequestTtlS: z.number().int().positive().default(3600),
  sweepIntervalS: z.number().positive().default(15),
  retention: z
    .strictObject({
      maxRunsPerCell: z.number().int().positive().default(500),
      maxAgeDays: z.number().positive().default(90),
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
  webhooks: z
    .strictObject({ urls: z.array(z.url()).default([]), secret: z.string().min(16).optional() })
    .default({ urls: [] }),
});
export type HubConfig = z.infer<typeof HubConfigSchema> & { configDir: string; webhookSecret: string | null };

export type ConfigResult = { ok: true; config: HubConfig } | { ok: false; errors: string[] };

export function parseConfig(raw: unknown, configDir: string, env: NodeJS.ProcessEnv): ConfigResult {
  const r = HubConfigSchema.safeParse(raw ?? {});
  if (!r.success)
    return { ok: false, errors: r.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`) };
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
