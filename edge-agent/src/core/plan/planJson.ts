/**
 * The parts of Terraform's plan JSON (`terraform show -json <planfile>`) that the summary reads.
 * Format reference: https://developer.hashicorp.com/terraform/internals/json-format
 * Everything is optional: format 0.1 (Terraform 0.12) lacks most newer fields, and minor versions only add.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface PlanChange {
  actions?: string[];
  before?: Json;
  after?: Json;
  after_unknown?: Json;
  before_sensitive?: Json;
  after_sensitive?: Json;
  importing?: Json;
  generated_config?: string;
}

export interface PlanResourceChange {
  address?: string;
  module_address?: string;
  mode?: string;
  type?: string;
  name?: string;
  index?: Json;
  provider_name?: string;
  previous_address?: string;
  action_reason?: string;
  change?: PlanChange;
}

export interface PlanJson {
  format_version: string;
  terraform_version?: string;
  variables?: Record<string, { value?: Json }>;
  planned_values?: Json;
  prior_state?: Json;
  resource_changes?: PlanResourceChange[];
  resource_drift?: PlanResourceChange[];
  output_changes?: Record<string, PlanChange>;
  configuration?: Json;
  /** Format 1.1+: check blocks, preconditions, postconditions and validations with their status. */
  checks?: Json;
  errored?: boolean;
  applyable?: boolean;
  complete?: boolean;
}

/** Why a JSON value is not a plan this agent can summarise. */
export type PlanShapeError = { reason: 'not-a-plan' | 'unsupported-format'; message: string };

const SUPPORTED_MAJORS = new Set(['0', '1']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks the shape just enough to read the plan safely; never guesses at an unknown major version. */
export function asPlanJson(v: unknown): { ok: true; plan: PlanJson } | ({ ok: false } & PlanShapeError) {
  if (!isObject(v)) {
    return { ok: false, reason: 'not-a-plan', message: 'the JSON is not an object, so it is not plan JSON' };
  }
  const fv = v.format_version;
  if (typeof fv !== 'string') {
    return {
      ok: false,
      reason: 'not-a-plan',
      message: 'the JSON has no "format_version"; pass the output of `terraform show -json <planfile>`',
    };
  }
  const major = /^(\d+)\.\d+/.exec(fv)?.[1];
  if (major === undefined || !SUPPORTED_MAJORS.has(major)) {
    return {
      ok: false,
      reason: 'unsupported-format',
      message: `plan format_version "${fv.slice(0, 20)}" is not supported (this agent reads 0.x and 1.x); upgrade edge-agent`,
    };
  }
  if (!('planned_values' in v) && !('resource_changes' in v)) {
    return {
      ok: false,
      reason: 'not-a-plan',
      message:
        'the JSON has neither "planned_values" nor "resource_changes" (a state file?); pass the output of `terraform show -json <planfile>`',
    };
  }
  for (const key of ['resource_changes', 'resource_drift'] as const) {
    if (key in v && v[key] !== null && !Array.isArray(v[key])) {
      return {
        ok: false,
        reason: 'not-a-plan',
        message: `"${key}" is not a list; the plan JSON is malformed`,
      };
    }
  }
  if ('output_changes' in v && v.output_changes !== null && !isObject(v.output_changes)) {
    return {
      ok: false,
      reason: 'not-a-plan',
      message: '"output_changes" is not an object; the plan JSON is malformed',
    };
  }
  return { ok: true, plan: v as unknown as PlanJson };
}
