import { z } from 'zod';
import { Sha256Schema } from './ids.js';

/**
 * What a plan run found, as it leaves the site. Built by allow-list (step 3 of docs/architecture.md#the-trip, decision 060):
 * names, counts and actions, never attribute, variable or output values.
 */

/**
 * `blocked`: the plan could not run because the site lacks something headquarters can send (a provider
 * build, the ref's commit); `needs` says exactly what.
 */
export const PLAN_STATUSES = [
  'clean',
  'changes',
  'drift',
  'failed',
  'locked',
  'redaction-failed',
  'blocked',
] as const;
export const PlanStatusSchema = z.enum(PLAN_STATUSES);
export type PlanStatus = z.infer<typeof PlanStatusSchema>;

/** Why a run failed: `timeout`, `exit-<code>`, `unsupported-format`, `not-a-plan`, `stuck-lock`, … */
export const FailureReasonSchema = z
  .string()
  .regex(/^[a-z0-9-]{1,64}$/, 'reason must be a short kebab-case code');

/**
 * How many resources a plan touches. `add`, `change` and `destroy` are the numbers of Terraform's
 * "Plan: N to add, N to change, N to destroy." line, counted the same way; the other fields say more
 * about them and are never to be added to them.
 */
export const PlanCountsSchema = z.object({
  /**
   * Resource instances to create: actions `["create"]` or `["create","forget"]`, and every replacement
   * (`["delete","create"]`, `["create","delete"]`), which Terraform counts once here and once in `destroy`.
   */
  add: z.number().int().nonnegative(),
  /** Resource instances to update in place: actions exactly `["update"]` (an import with changes included). */
  change: z.number().int().nonnegative(),
  /**
   * Managed resource instances to destroy: actions `["delete"]`, and every replacement (also counted in
   * `add`). Deleted data sources and `forget` (removed from state, left running) are not counted.
   */
  destroy: z.number().int().nonnegative(),
  /**
   * How many of the instances in `add` are replacements, each also one of `destroy`. A breakdown, not a
   * further change: `{ add: 1, destroy: 1, replace: 1 }` is one resource replaced.
   */
  replace: z.number().int().nonnegative(),
  /** Resource instances to import (Terraform's "N to import"); each may also be in `change`. */
  import: z.number().int().nonnegative(),
  /**
   * Entries of `resource_drift`: objects changed outside Terraform since the last apply. Apart from the
   * proposed changes above; the plan may or may not propose to undo them.
   */
  drift: z.number().int().nonnegative(),
});
export type PlanCounts = z.infer<typeof PlanCountsSchema>;

export const ZERO_COUNTS: PlanCounts = { add: 0, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 };

export const ACTIONS = ['no-op', 'create', 'read', 'update', 'delete', 'forget'] as const;

export const ResourceChangeSchema = z.object({
  address: z.string(),
  module: z.string().optional(),
  type: z.string(),
  name: z.string().optional(),
  provider: z.string().optional(),
  /** Terraform's action list, e.g. `["update"]`, `["delete","create"]`. */
  actions: z.array(z.string()),
  /** true for an entry of `resource_drift` (changed outside Terraform), false for a proposed change. */
  drift: z.boolean(),
  /** Terraform's `action_reason`. */
  reason: z.string().optional(),
  /** Where a `moved` resource came from. */
  previousAddress: z.string().optional(),
  importing: z.boolean().optional(),
  /** Paths of attributes that change, e.g. `tags.env`, `ingress[0].cidr_blocks`; never values. */
  changedAttributes: z.array(z.string()),
});
export type ResourceChange = z.infer<typeof ResourceChangeSchema>;

/**
 * A check's result as the cell shows it. Terraform's `error` (the condition could not be evaluated)
 * counts as `fail`, with `errored: true`.
 */
export const CHECK_STATUSES = ['pass', 'fail', 'unknown'] as const;
export const CheckStatusSchema = z.enum(CHECK_STATUSES);
export type CheckStatus = z.infer<typeof CheckStatusSchema>;

/** One entry of the plan's `checks` (a `check` block, a resource's or output's conditions, a variable's validation). */
export const CheckResultSchema = z.object({
  /** Terraform's `address.to_display`, e.g. `check.health`, `module.net.aws_vpc.this` (instance keys masked). */
  address: z.string().min(1).max(300),
  /** Terraform's `address.kind`: `check`, `resource`, `output_value`, `var`, or `unknown`. */
  kind: z.string().max(32).optional(),
  status: CheckStatusSchema,
  /** Terraform said `error` (counted as `fail`). */
  errored: z.boolean().optional(),
  /**
   * The first problem's author-written message, only when the site keeps custom messages
   * (`redaction.keepCustomMessages`) and the scan finds no value in it.
   */
  message: z.string().max(500).optional(),
});
export type CheckResult = z.infer<typeof CheckResultSchema>;

/**
 * Continuous validation: the plan's `checks` (check blocks, preconditions, postconditions) counted by
 * status, with the first entries (failures first). Optional: older agents send none and older hubs
 * ignore it (decision 420).
 */
export const PlanChecksSchema = z.object({
  pass: z.number().int().nonnegative(),
  fail: z.number().int().nonnegative(),
  unknown: z.number().int().nonnegative(),
  items: z.array(CheckResultSchema).max(100),
});
export type PlanChecks = z.infer<typeof PlanChecksSchema>;

/** A drifted resource in brief: what a drift episode at the hub is keyed and grouped by. */
export const DriftedSchema = z.object({
  address: z.string().max(500),
  type: z.string().max(200),
  attributes: z.array(z.string().max(200)).max(50),
});
export type Drifted = z.infer<typeof DriftedSchema>;

export const GitInfoSchema = z.object({
  commit: z.string().regex(/^[0-9a-f]{7,64}$/),
  branch: z.string().max(255).optional(),
  dirty: z.boolean().optional(),
});

/**
 * The state lock a `locked` or `stuck-lock` run met: Terraform's "Lock Info" (`LockInfo.String()`,
 * internal/states/statemgr/locker.go), each field scanned alone at the site, so a field that looks like a
 * secret is left out and the others stay. `dir` and `workspace` say where `terraform force-unlock <id>`
 * is to be run, when the agent knows: the configured working directory (absent for a component planned
 * from a git checkout, which is gone after the run) and `TF_WORKSPACE` (decision 555). Absent from older agents.
 */
export const StateLockSchema = z.object({
  /** The lock's ID: what `terraform force-unlock` takes. */
  id: z.string().min(1).max(200),
  path: z.string().max(200).optional(),
  operation: z.string().max(200).optional(),
  /** `user@host` of the holder. */
  who: z.string().max(200).optional(),
  version: z.string().max(200).optional(),
  /** When the holder took it, as Terraform prints it (`2026-12-02 16:46:18.137954996 +0000 UTC`). */
  created: z.string().max(200).optional(),
  info: z.string().max(200).optional(),
  dir: z.string().max(500).optional(),
  workspace: z.string().max(200).optional(),
});
export type StateLock = z.infer<typeof StateLockSchema>;

export const PlanSummarySchema = z.object({
  component: z.string().min(1),
  environment: z.string().min(1),
  status: PlanStatusSchema,
  /** Failure reason (`failed`), lock detail (`locked`) or the rule name (`redaction-failed`). */
  reason: z.string().max(200).optional(),
  /** A short, secret-scanned excerpt of the tool's error output. */
  errorExcerpt: z.string().max(2000).optional(),
  /** For `locked` and `failed`/`stuck-lock`: the lock that is held, when Terraform said (decision 555). */
  lock: StateLockSchema.optional(),
  /** Absent when nothing of the plan may leave (`redaction-failed`) or there was no plan (`failed`, `locked`). */
  counts: PlanCountsSchema.optional(),
  resources: z.array(ResourceChangeSchema).optional(),
  /**
   * The drifted resources in brief (address, type, attribute names; at most 50), so the hub can track
   * drift per address from the agent's document alone: `resources` travel in the detail blob, last
   * (decision 421). Absent from older agents.
   */
  drifted: z.array(DriftedSchema).max(50).optional(),
  /** The plan's checks, counted (decision 420); absent from older agents and plans without `checks`. */
  checks: PlanChecksSchema.optional(),
  /** Names of root outputs that change. */
  outputChanges: z.array(z.string()).optional(),
  errored: z.boolean().optional(),
  applyable: z.boolean().optional(),
  complete: z.boolean().optional(),
  terraformVersion: z.string().optional(),
  formatVersion: z.string().optional(),
  git: GitInfoSchema.optional(),
  /** The ref planned (`main`, `pr/42`) when the source came from the site's git mirror. */
  ref: z.string().max(200).optional(),
  /** For `blocked`: what the site needs, e.g. `registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64`. */
  needs: z.array(z.string().max(300)).max(50).optional(),
  exitCode: z.number().int().optional(),
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime(),
  /**
   * Equal plans give equal hashes; what decides "unchanged". At a site: an HMAC-SHA256 under the site's
   * own key over the canonical redacted detail and what apply would do, values included (and the plan
   * file's commit for an apply-enabled cell): nothing secret is in it (decision 200). Without
   * a site key (`edge-agent summarize`): the sha256 of the canonical redacted detail.
   */
  planHash: Sha256Schema.optional(),
  /**
   * sha256 of the saved plan file a run of an apply-enabled cell keeps at the site (never sent): what an
   * approval names, and what the agent checks before `terraform apply <planfile>`.
   */
  planFileSha256: Sha256Schema.optional(),
  /**
   * The redaction policy the agent made this result under (absent: policy 1, before decision 210). From
   * policy 2 on, a variable's value inside an instance key shows as a tag (`["user-⟨db_password:3f9a1c⟩"]`),
   * so an address that differs from an older run's may be a masked key, not a renamed resource.
   */
  redactionPolicy: z.string().max(32).optional(),
});
export type PlanSummary = z.infer<typeof PlanSummarySchema>;
