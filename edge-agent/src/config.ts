import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { AgentIdSchema, FileKindSchema, SiteIdSchema } from '@driftline/protocol';
import { validate as validCron } from 'node-cron';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { nestedQuantifier } from './core/redact/rules.js';

/**
 * The agent's configuration file (YAML). Paths are relative to the file's directory. Everything the
 * agent may run is listed here: the hub can ask for a plan only of a (component, environment) named
 * here (DESIGN S3).
 */

const NAME = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "must be 1-63 characters of letters, digits, '.', '_' or '-'");

const EnvVars = z.record(
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
  z.string(),
);

const EnvironmentObjectSchema = z.strictObject({
  name: NAME,
  /** Working directory for this environment, if not the component's. */
  workingDir: z.string().min(1).optional(),
  /** `-var-file=` arguments, relative to the working directory. */
  varFiles: z.array(z.string().min(1)).optional(),
  /** Terraform workspace (sets TF_WORKSPACE). */
  workspace: z.string().min(1).optional(),
  env: EnvVars.optional(),
});

/** An environment is a name, or an object with a name and its own directory, var files, workspace, env. */
const EnvironmentSchema = z.union([
  NAME.transform((name): z.infer<typeof EnvironmentObjectSchema> => ({ name })),
  EnvironmentObjectSchema,
]);

const ComponentSchema = z
  .strictObject({
    name: NAME,
    workingDir: z.string().min(1),
    environments: z.array(EnvironmentSchema).min(1, 'list at least one environment'),
    tool: z.enum(['terraform', 'tofu']).default('terraform'),
    /**
     * A program that prints plan JSON on stdout, replacing plan + show. `{component}`, `{environment}`
     * and `{workingDir}` in its arguments are replaced. Exit 0 or 2 is success.
     */
    command: z.array(z.string().min(1)).min(1).optional(),
    env: EnvVars.default({}),
    /** Cron expression (node-cron, 5 or 6 fields). */
    schedule: z
      .string()
      .refine((s) => validCron(s), {
        error: (iss) => `"${String(iss.input)}" is not a valid cron expression (e.g. "*/30 * * * *")`,
      })
      .default('0 */6 * * *'),
    timeoutS: z.number().positive().max(86_400).default(1800),
    lockTimeoutS: z.number().int().nonnegative().max(3600).default(60),
    /** After this many consecutive `locked` runs the cell becomes `failed` / `stuck-lock`. */
    lockRetryThreshold: z.number().int().positive().max(1000).default(3),
  })
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.environments.forEach((e, i) => {
      if (seen.has(e.name))
        ctx.addIssue({
          code: 'custom',
          path: ['environments', i],
          message: `environment "${e.name}" is listed twice`,
        });
      seen.add(e.name);
    });
  });

const PatternSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9-]{1,40}$/, 'must be a short kebab-case name'),
  regex: z
    .string()
    .refine((r) => {
      try {
        new RegExp(r);
        return true;
      } catch {
        return false;
      }
    }, 'is not a valid regular expression')
    .refine(
      (r) => !nestedQuantifier(r),
      'has a quantified group that holds a quantifier (like (a+)+), which can take exponential time on some input; rewrite it without nesting',
    ),
});

export const AgentConfigSchema = z
  .strictObject({
    site: SiteIdSchema,
    agent: AgentIdSchema,
    /** Where the agent keeps its SQLite database, keys and scratch space. */
    dataDir: z.string().min(1),
    /** The hub's Ed25519 public key (PEM or `ed25519:` line), pinned for control traffic (DESIGN S4). */
    hubPublicKeyFile: z.string().min(1),
    upstreams: z
      .array(z.strictObject({ url: z.url({ protocol: /^https?$/ }), tokenFile: z.string().min(1) }))
      .min(1, 'list at least one upstream (relay or hub)'),
    components: z.array(ComponentSchema).min(1, 'list at least one component'),
    redaction: z
      .strictObject({
        patterns: z.array(PatternSchema).default([]),
        sensitiveAttributes: z.array(z.string().min(1)).default([]),
      })
      .default({ patterns: [], sensitiveAttributes: [] }),
    /** How results travel upstream (issue 4). */
    sync: z
      .strictObject({
        /** Seconds between push/pull cycles while the link works. */
        intervalS: z.number().positive().max(86_400).default(30),
        /** First retry after a failed cycle; doubles (with jitter) up to `backoffCapS`. */
        backoffBaseS: z.number().positive().max(3600).default(5),
        backoffCapS: z.number().positive().max(86_400).default(900),
        /** How long relays keep a bundle of this agent before dropping (and counting) it. */
        bundleLifetimeS: z
          .number()
          .int()
          .positive()
          .default(30 * 86_400),
        /** Seal the document epoch past this size (DESIGN C1). */
        maxDocBytes: z
          .number()
          .int()
          .min(4096)
          .default(512 * 1024),
        /** Seal the epoch after this many changes as well (load time follows the number of changes). */
        maxDocChanges: z.number().int().min(100).max(1_000_000).default(2000),
        /** Bound on queued bytes on disk (D5): detail blobs of clean results are dropped first, counted. */
        maxQueueBytes: z
          .number()
          .int()
          .min(64 * 1024)
          .default(512 * 1024 * 1024),
        /**
         * Longest a finished plan's result waits for others to share its commit (one transaction, one
         * fsync, one document change for results that finish together). It is not recorded, nor reported
         * recorded, before that commit; a crash in the window loses only results nobody was told about.
         */
        recordWindowS: z.number().nonnegative().max(60).default(5),
        /** Plans that may run at the same time. */
        maxParallelRuns: z.number().int().positive().max(64).default(2),
        /** Random delay before a scheduled plan, so cells and agents do not all start together. */
        jitterS: z.number().nonnegative().max(3600).default(30),
        /**
         * Seconds between contacts the hub should expect before calling the site unreachable. Default:
         * twice (shortest cadence + jitter) plus the sync interval, since the agent sends when it has a result.
         */
        contactIntervalS: z.number().positive().optional(),
        /** Contact windows the agent expects (cron-like text), shown in the dashboard's site view. */
        contactWindows: z.array(z.string()).default([]),
      })
      .prefault({}),
    /**
     * Bundles to outposts: kinds this site accepts from headquarters and the directory each goes to.
     * Kinds not listed are refused and reported; nothing received is ever executed or unpacked.
     */
    bundles: z
      .strictObject({
        accept: z
          .partialRecord(
            FileKindSchema,
            z.strictObject({ dir: z.string().min(1), maxBytes: z.number().int().positive().optional() }),
          )
          .default({}),
        quotaBytes: z
          .number()
          .int()
          .positive()
          .default(10 * 1024 ** 3),
        chunkBytes: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
        /** Wait after a failed fetch (link down, the relay does not hold the blob yet) before the next try. */
        retryMs: z.number().int().positive().default(15_000),
      })
      .prefault({}),
    limits: z
      .strictObject({
        /** Plan JSON larger than this is refused before parsing (bounded memory). */
        maxPlanBytes: z
          .number()
          .int()
          .positive()
          .default(128 * 1024 * 1024),
        /** stderr (and a command's non-plan stdout) kept per run. */
        maxLogBytes: z
          .number()
          .int()
          .positive()
          .default(256 * 1024),
      })
      .default({ maxPlanBytes: 128 * 1024 * 1024, maxLogBytes: 256 * 1024 }),
  })
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.components.forEach((comp, i) => {
      if (seen.has(comp.name))
        ctx.addIssue({
          code: 'custom',
          path: ['components', i, 'name'],
          message: `component "${comp.name}" is listed twice`,
        });
      seen.add(comp.name);
    });
  });

export type AgentConfig = z.infer<typeof AgentConfigSchema>;
export type ComponentConfig = AgentConfig['components'][number];
export type EnvironmentConfig = ComponentConfig['environments'][number];

export type LoadConfigResult = { ok: true; config: AgentConfig } | { ok: false; problems: string[] };

function keyPath(path: readonly PropertyKey[]): string {
  return (
    path.reduce<string>(
      (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)),
      '',
    ) || '(top level)'
  );
}

function absolutise(c: AgentConfig, base: string): AgentConfig {
  const abs = (p: string) => resolve(base, p);
  return {
    ...c,
    dataDir: abs(c.dataDir),
    hubPublicKeyFile: abs(c.hubPublicKeyFile),
    upstreams: c.upstreams.map((u) => ({ ...u, tokenFile: abs(u.tokenFile) })),
    components: c.components.map((comp) => ({
      ...comp,
      workingDir: abs(comp.workingDir),
      environments: comp.environments.map((e) =>
        e.workingDir ? { ...e, workingDir: resolve(abs(comp.workingDir), e.workingDir) } : e,
      ),
    })),
    bundles: {
      ...c.bundles,
      accept: Object.fromEntries(
        Object.entries(c.bundles.accept).map(([k, v]) => [k, { ...v, dir: abs(v.dir) }]),
      ),
    },
  };
}

function fileProblems(c: AgentConfig): string[] {
  const problems: string[] = [];
  const need = (path: string, file: string, what: string, dir = false) => {
    if (!existsSync(file)) problems.push(`${path}: ${what} "${file}" does not exist`);
    else if (dir !== statSync(file).isDirectory())
      problems.push(`${path}: "${file}" is not a ${dir ? 'directory' : 'file'}`);
  };
  need('hubPublicKeyFile', c.hubPublicKeyFile, 'hub public key file');
  c.upstreams.forEach((u, i) => {
    need(`upstreams[${i}].tokenFile`, u.tokenFile, 'token file');
  });
  c.components.forEach((comp, i) => {
    need(`components[${i}].workingDir`, comp.workingDir, 'working directory', true);
    comp.environments.forEach((e, j) => {
      if (e.workingDir)
        need(`components[${i}].environments[${j}].workingDir`, e.workingDir, 'working directory', true);
    });
  });
  return problems;
}

/** Validates config text (YAML). `base` resolves relative paths. Does not touch the file system. */
export function parseConfig(text: string, base: string): LoadConfigResult {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    return {
      ok: false,
      problems: [`(file): not valid YAML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`],
    };
  }
  const parsed = AgentConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${keyPath(i.path)}: ${i.message}`) };
  }
  return { ok: true, config: absolutise(parsed.data, base) };
}

/**
 * Reads and validates the config file. Problems name the key path and what to fix; files the config
 * points at (key, tokens, working directories) must exist unless `checkFiles` is false.
 */
export function loadConfig(path: string, opts: { checkFiles?: boolean } = {}): LoadConfigResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return {
      ok: false,
      problems: [`(file): cannot read "${path}": ${(e as NodeJS.ErrnoException).code ?? String(e)}`],
    };
  }
  const r = parseConfig(text, dirname(resolve(path)));
  if (!r.ok || opts.checkFiles === false) return r;
  const problems = fileProblems(r.config);
  return problems.length ? { ok: false, problems } : r;
}
