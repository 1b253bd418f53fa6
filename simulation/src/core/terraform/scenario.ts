import { z } from 'zod';

/**
 * What a fake plan run finds. `drift` is drift only (exit 0 under -detailed-exitcode).
 * `invalid-variable` fails a variable validation rule the way Terraform does, quoting the offending
 * `-var-file` line and the value (a secret) in its error output. `apply-error` plans like `changes`, and
 * applying that plan fails part-way through.
 */
export const FAKE_STATES = [
  'clean',
  'changes',
  'drift',
  'failed',
  'locked',
  'invalid-variable',
  'apply-error',
] as const;
export type FakeState = (typeof FAKE_STATES)[number];

export const StepSchema = z
  .object({
    state: z.enum(FAKE_STATES),
    /** With `by: runs`: how many plan runs this step lasts (default 1). */
    runs: z.number().int().positive().optional(),
    /** With `by: time`: how many seconds this step lasts (default 60). */
    seconds: z.number().positive().optional(),
    /**
     * Another variant of the same state gives a different (but again deterministic) plan. For
     * `invalid-variable`, variant 1 has the rule's error message quote the value too (Terraform 1.9+
     * lets `error_message` refer to the variable).
     */
    variant: z.number().int().nonnegative().default(0),
    /** How long `plan` takes, to exercise the agent's timeout. */
    durationMs: z.number().int().nonnegative().max(3_600_000).default(0),
    /**
     * The plan's `checks` (Terraform 1.5+): check blocks and conditions with their status, and the
     * author's message of a failing one, as `terraform show -json` prints them.
     */
    checks: z
      .array(
        z
          .object({
            address: z.string().min(1).max(300),
            kind: z.enum(['check', 'resource', 'output_value', 'var']).default('check'),
            status: z.enum(['pass', 'fail', 'error', 'unknown']),
            message: z.string().max(500).optional(),
          })
          .strict(),
      )
      .max(50)
      .optional(),
  })
  .strict();
export type Step = z.infer<typeof StepSchema>;

/**
 * A component's scenario (`fake-terraform.yaml` in its directory, or `FAKE_TERRAFORM_SCENARIO`):
 * the states its plans go through, by run count or by time since the first run.
 */
export const ScenarioSchema = z
  .object({
    component: z.string().min(1).optional(),
    environment: z.string().min(1).optional(),
    seed: z.number().int().default(1),
    terraformVersion: z.string().default('1.9.8'),
    by: z.enum(['runs', 'time']).default('runs'),
    /** Start again from the first step after the last; otherwise stay on the last. */
    loop: z.boolean().default(true),
    /** Extra `aws_instance.fleet[n]` resources, for bigger plans. */
    extraResources: z.number().int().min(0).max(5000).default(0),
    /**
     * In a `changes` plan every extra resource gets new tags under seeded random keys too: a big plan
     * detail that hardly compresses, while the result itself (counts, no resources) stays small.
     */
    extraChanges: z.boolean().default(false),
    steps: z.array(StepSchema).min(1, 'a scenario needs at least one step'),
    /**
     * Providers the configuration requires (its `required_providers`), `[<host>/]<namespace>/<type> <version>`:
     * `init` installs them (with those of `.terraform.lock.hcl`) and `plan` refuses to run without them.
     */
    providers: z
      .array(
        z
          .string()
          .max(300)
          .regex(
            /^([a-z0-9.-]{1,100}\/)?[a-z0-9_-]{1,64}\/[a-z0-9_-]{1,64} [0-9][0-9A-Za-z.+-]{0,63}$/,
            'must be "[<host>/]<namespace>/<type> <version>", e.g. "hashicorp/aws 5.31.0"',
          ),
      )
      .max(100)
      .default([]),
    /**
     * Module calls of the configuration: `init` fetches each first (a local path or `git::file://`
     * repository that exists; any other source needs FAKE_TERRAFORM_NETWORK=1) or fails as Terraform does.
     */
    modules: z
      .array(
        z.strictObject({
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
          source: z.string().min(1).max(1000),
        }),
      )
      .max(50)
      .default([]),
  })
  .strict();
export type Scenario = z.infer<typeof ScenarioSchema>;

/** A scenario for a directory without a file: clean, then changes, drift, failed, locked, in turn. */
export const DEFAULT_SCENARIO: Scenario = ScenarioSchema.parse({
  steps: [
    { state: 'clean', runs: 2 },
    { state: 'changes', runs: 2 },
    { state: 'drift' },
    { state: 'changes', variant: 1 },
    { state: 'failed' },
    { state: 'locked' },
  ],
});

export function parseScenario(
  input: unknown,
): { ok: true; scenario: Scenario } | { ok: false; problems: string[] } {
  const r = ScenarioSchema.safeParse(input);
  if (r.success) return { ok: true, scenario: r.data };
  return {
    ok: false,
    problems: r.error.issues.map((i) => `${i.path.join('.') || 'scenario'}: ${i.message}`),
  };
}

/** The step in force for the `run`-th plan (0-based) or `elapsedMs` after the first run. */
export function pickStep(s: Scenario, at: { run: number; elapsedMs: number }): { step: Step; index: number } {
  const lengths = s.steps.map((st) => (s.by === 'runs' ? (st.runs ?? 1) : (st.seconds ?? 60) * 1000));
  const total = lengths.reduce((a, b) => a + b, 0);
  let pos = s.by === 'runs' ? at.run : at.elapsedMs;
  if (pos >= total) {
    if (!s.loop) return { step: s.steps[s.steps.length - 1]!, index: s.steps.length - 1 };
    pos %= total;
  }
  for (let i = 0; i < lengths.length; i++) {
    if (pos < lengths[i]!) return { step: s.steps[i]!, index: i };
    pos -= lengths[i]!;
  }
  return { step: s.steps[s.steps.length - 1]!, index: s.steps.length - 1 };
}

/**
 * Which pass over which step `at` falls in (cycle × steps + index): once a plan of it is applied, plans in
 * the same instance find nothing left to do.
 */
export function stepInstance(s: Scenario, at: { run: number; elapsedMs: number }): number {
  const { index } = pickStep(s, at);
  const lengths = s.steps.map((st) => (s.by === 'runs' ? (st.runs ?? 1) : (st.seconds ?? 60) * 1000));
  const total = lengths.reduce((a, b) => a + b, 0);
  const pos = s.by === 'runs' ? at.run : at.elapsedMs;
  const cycle = s.loop && total > 0 ? Math.floor(pos / total) : 0;
  return cycle * s.steps.length + index;
}
