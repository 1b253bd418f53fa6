import {
  ENTRY_NAME,
  entryNameProblem,
  parseZonedSchedule,
  RefPatternSchema,
  refNameProblem,
} from '@driftline/protocol';
import { z } from 'zod';
import { nestedQuantifier } from './core/redact/rules.js';

/** The parts of `agent.yaml` that describe what the agent runs: components, environments, secret shapes. */

/** A component's or environment's name: the hub refuses any other as a document key (decision 570). */
const NAME = z
  .string()
  .regex(ENTRY_NAME, "must be 1-63 characters of letters, digits, '.', '_' or '-'")
  .superRefine((s, ctx) => {
    const p = ENTRY_NAME.test(s) ? entryNameProblem(s) : null;
    if (p) ctx.addIssue({ code: 'custom', message: p });
  });

const EnvVars = z.record(
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
  z.string(),
);

const EnvironmentObjectSchema = z.strictObject({
  name: NAME.describe('Environment name, as the dashboard shows it (e.g. prod).'),
  workingDir: z
    .string()
    .min(1)
    .optional()
    .describe(
      "This environment's own working directory, relative to the component's; default the component's.",
    ),
  varFiles: z
    .array(z.string().min(1))
    .optional()
    .describe('Files passed as -var-file=, relative to the working directory; their values are never sent.'),
  workspace: z.string().min(1).optional().describe('Terraform workspace to plan in (sets TF_WORKSPACE).'),
  env: EnvVars.optional().describe("Extra environment variables for this environment's runs."),
});

/** An environment is a name, or an object with a name and its own directory, var files, workspace, env. */
const EnvironmentSchema = z
  .union([
    NAME.transform((name): z.infer<typeof EnvironmentObjectSchema> => ({ name })),
    EnvironmentObjectSchema,
  ])
  .describe('An environment: its name, or { name, workingDir, varFiles, workspace, env }.');

/** A path inside a repository: relative, no `..`, no leading `/`. */
const REPO_PATH = z
  .string()
  .min(1)
  .max(500)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), {
    message: 'must be a relative path inside the repository, without ".."',
  });

/** Where a component's code comes from when headquarters delivers it as git bundles. */
export const SourceSchema = z
  .strictObject({
    repo: NAME.describe(
      'Repository name: the name headquarters publishes its git bundles under (`hub source publish --name`).',
    ),
    path: REPO_PATH.default('.').describe("The component's directory inside the repository."),
    refs: z
      .array(RefPatternSchema)
      .min(1)
      .max(50)
      .default(['main'])
      .describe(
        'Refs this component may plan (branches, tags, pr/<n>; * matches anything); the first is its default ref, shown in the main view.',
      ),
  })
  .superRefine((s, ctx) => {
    const first = s.refs[0];
    if (first !== undefined && (first.includes('*') || refNameProblem(first)))
      ctx.addIssue({
        code: 'custom',
        path: ['refs', 0],
        message: 'the first ref (the default) must be a plain ref name, without *',
      });
  });

/** An approver's public key as the agent pins it: `ed25519:` and 43 base64url characters. */
const APPROVER_KEY = z
  .string()
  .regex(
    /^ed25519:[A-Za-z0-9_-]{43}$/,
    "must be 'ed25519:' and 43 base64url characters (`hub approver keygen` prints it)",
  );

/**
 * Applying approved plans (S6 in docs/architecture.md#invariants): off unless given. The agent applies a run's saved plan only with a
 * quorum of approvals signed by the keys pinned here, never the hub's.
 */
export const ApplySchema = z
  .strictObject({
    environments: z
      .array(NAME)
      .min(1)
      .optional()
      .describe("Environments of this component that may be applied; default all of the component's."),
    refs: z
      .array(RefPatternSchema)
      .min(1)
      .max(50)
      .default(['main'])
      .describe('Refs whose plans may be applied (* matches anything); for a workingDir component use main.'),
    approvers: z
      .array(APPROVER_KEY)
      .min(1, 'pin at least one approver key')
      .max(50)
      .describe(
        "Approvers' public keys (`ed25519:…`): only approvals signed by these count; never put the hub's key here.",
      ),
    quorum: z
      .number()
      .int()
      .positive()
      .max(50)
      .default(1)
      .describe('Distinct approvers whose approvals of the same run are needed before it is applied.'),
    maxApprovalAgeS: z
      .number()
      .int()
      .positive()
      .max(30 * 86_400)
      .default(86_400)
      .describe('An approval signed longer ago than this (agent clock) is refused as expired, seconds.'),
  })
  .superRefine((a, ctx) => {
    if (a.quorum > new Set(a.approvers).size)
      ctx.addIssue({
        code: 'custom',
        path: ['quorum'],
        message: `quorum ${a.quorum} can never be met by ${new Set(a.approvers).size} distinct approver key(s): pin more keys or lower the quorum`,
      });
  });

/** One component: a Terraform root module planned in each of its environments. */
export const ComponentSchema = z
  .strictObject({
    name: NAME.describe('Component name, as the dashboard shows it (e.g. network).'),
    workingDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Directory holding the component's Terraform code, relative to this file (or give source instead).",
      ),
    source: SourceSchema.optional().describe(
      "Plan code headquarters delivers as git bundles: the repository, the component's path in it and the refs it may plan (instead of workingDir).",
    ),
    init: z
      .boolean()
      .optional()
      .describe(
        'Run `terraform init` (providers only from the delivered mirrors, never the network) before each plan; default true with source, false with workingDir.',
      ),
    environments: z
      .array(EnvironmentSchema)
      .min(1, 'list at least one environment')
      .describe('Environments planned for this component; each is one cell of the dashboard.'),
    tool: z
      .enum(['terraform', 'tofu'])
      .default('terraform')
      .describe('Program that plans, looked up on PATH: terraform or tofu (OpenTofu).'),
    command: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe(
        'A program (on PATH, or a path from the working directory) printing plan JSON on stdout instead of plan + show; {component}, {environment}, {workingDir} are filled in; exit 0 or 2 is success.',
      ),
    env: EnvVars.default({}).describe('Extra environment variables for every run of this component.'),
    schedule: z
      .string()
      .superRefine((s, ctx) => {
        const r = parseZonedSchedule(s, { seconds: true });
        if (!r.ok) ctx.addIssue({ code: 'custom', message: `${r.error} (e.g. "*/30 * * * *")` });
      })
      .default('0 */6 * * *')
      .describe(
        "When to plan: a cron expression (5 fields, or 6 with seconds first), local time or ending 'tz Europe/Berlin' (an IANA zone, as contact windows take); day-of-month or day-of-week when both are set, as cron.",
      ),
    timeoutS: z
      .number()
      .positive()
      .max(86_400)
      .default(1800)
      .describe('A run taking longer is stopped and recorded as failed (timeout), seconds.'),
    lockTimeoutS: z
      .number()
      .int()
      .nonnegative()
      .max(3600)
      .default(60)
      .describe("How long plan waits for the state lock (Terraform's -lock-timeout), seconds."),
    apply: ApplySchema.optional().describe(
      'Apply plans approved at headquarters: refs, pinned approver keys, quorum, approval age; off when absent.',
    ),
    lockRetryThreshold: z
      .number()
      .int()
      .positive()
      .max(1000)
      .default(3)
      .describe(
        'After this many locked runs in a row the cell becomes failed (stuck-lock) and stays so until a run gets the lock.',
      ),
  })
  .superRefine((c, ctx) => {
    if ((c.workingDir === undefined) === (c.source === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['workingDir'],
        message: 'give either workingDir (code on this machine) or source (code delivered as git bundles)',
      });
    if (c.source && c.command)
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'command cannot be used with source: a delivered repository is planned with terraform/tofu',
      });
    if (c.apply && c.command)
      ctx.addIssue({
        code: 'custom',
        path: ['apply'],
        message: 'apply cannot be used with command: only a terraform/tofu plan saves a plan file to apply',
      });
    for (const [i, name] of (c.apply?.environments ?? []).entries())
      if (!c.environments.some((e) => e.name === name))
        ctx.addIssue({
          code: 'custom',
          path: ['apply', 'environments', i],
          message: `environment "${name}" is not one of this component's environments`,
        });
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

/** One extra secret shape for the final scan. */
export const PatternSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, 'must be a short kebab-case name')
    .describe('Rule name, the only thing ever reported on a hit (kebab-case).'),
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
    )
    .describe('JavaScript regular expression of a secret shape; no nested quantifiers like (a+)+.'),
});
