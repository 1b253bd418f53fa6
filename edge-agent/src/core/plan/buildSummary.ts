import type { PlanCounts, PlanStatus, PlanSummary, ResourceChange } from '@driftline/protocol';
import { changedPaths } from './changedPaths.js';
import type { PlanJson, PlanResourceChange } from './planJson.js';
import { ACTION_REASONS, CHANGE_ACTIONS, enumerated } from './terraformEnums.js';

/** A provider address (`registry.terraform.io/hashicorp/aws`, or `aws` before 0.13). */
const PROVIDER = /^[A-Za-z0-9._/-]{1,256}$/;
const TF_VERSION = /^\d{1,4}\.\d{1,4}\.\d{1,4}(?:-[A-Za-z0-9.]{1,32})?$/;
const FORMAT_VERSION = /^\d{1,4}\.\d{1,4}$/;

export interface BuildContext {
  component: string;
  environment: string;
  startedAt: string;
  finishedAt: string;
  /** Attribute names treated as sensitive on top of Terraform's own markers. */
  sensitiveNames: ReadonlySet<string>;
}

function entry(rc: PlanResourceChange, drift: boolean, sensitiveNames: ReadonlySet<string>): ResourceChange {
  const raw = rc.change?.actions;
  const actions = (Array.isArray(raw) ? raw : []).map((a) => enumerated(CHANGE_ACTIONS, a));
  const r: ResourceChange = {
    address: String(rc.address ?? ''),
    type: String(rc.type ?? ''),
    actions,
    drift,
    changedAttributes: changedPaths(rc.change, sensitiveNames),
  };
  if (typeof rc.module_address === 'string') r.module = rc.module_address;
  if (typeof rc.name === 'string') r.name = rc.name;
  if (typeof rc.provider_name === 'string' && PROVIDER.test(rc.provider_name)) r.provider = rc.provider_name;
  // Only Terraform's documented reasons leave the site; anything else says `unknown`.
  if (rc.action_reason !== undefined && rc.action_reason !== null) {
    r.reason = enumerated(ACTION_REASONS, rc.action_reason);
  }
  if (typeof rc.previous_address === 'string') r.previousAddress = rc.previous_address;
  if (rc.change?.importing !== undefined && rc.change.importing !== null) r.importing = true;
  return r;
}

/** Terraform before 0.14 listed every root output as `create`, so outputs then say nothing about changes. */
function outputsMeanChanges(terraformVersion: string | undefined): boolean {
  const m = /^(\d+)\.(\d+)/.exec(terraformVersion ?? '');
  return !m || Number(m[1]) > 0 || Number(m[2]) >= 14;
}

/** Counts as Terraform's "Plan:" line does: a replace is also one add and one destroy. */
export function countChanges(changes: readonly ResourceChange[], drift: number): PlanCounts {
  const counts: PlanCounts = { add: 0, change: 0, destroy: 0, replace: 0, import: 0, drift };
  for (const r of changes) {
    const create = r.actions.includes('create');
    const del = r.actions.includes('delete');
    if (create) counts.add++;
    if (del) counts.destroy++;
    if (create && del) counts.replace++;
    if (r.actions.length === 1 && r.actions[0] === 'update') counts.change++;
    if (r.importing) counts.import++;
  }
  return counts;
}

/**
 * Terraform 0.12 planned `["delete"]` for a data source gone from the configuration; Terraform neither
 * shows nor counts it ("Don't render anything for deleted data sources", command/jsonformat/plan.go).
 */
function isDataSourceDelete(rc: PlanResourceChange): boolean {
  const a = rc.change?.actions;
  return rc.mode === 'data' && Array.isArray(a) && a.length === 1 && a[0] === 'delete';
}

function proposes(r: ResourceChange): boolean {
  return (
    r.actions.some((a) => a !== 'no-op' && a !== 'read') ||
    r.previousAddress !== undefined ||
    r.importing === true
  );
}

/**
 * The allow-listed projection of a plan (step 3 of docs/architecture.md#the-trip): names, types, actions, counts and attribute
 * paths. No value from variables, before/after, planned_values, prior_state, output_changes,
 * resource_drift or configuration is copied. Not yet scanned and not yet hashed.
 */
export function buildSummary(plan: PlanJson, ctx: BuildContext): PlanSummary {
  const changes = (plan.resource_changes ?? [])
    .filter((rc) => rc && typeof rc === 'object' && !isDataSourceDelete(rc))
    .map((rc) => entry(rc, false, ctx.sensitiveNames))
    .filter((r) => proposes(r) || r.actions.includes('read'));
  const drift = (plan.resource_drift ?? [])
    .filter((rc) => rc && typeof rc === 'object')
    .map((rc) => entry(rc, true, ctx.sensitiveNames));
  const outputChanges = outputsMeanChanges(plan.terraform_version)
    ? Object.entries(plan.output_changes ?? {})
        .filter(([, c]) => (c?.actions ?? []).some((a) => a !== 'no-op'))
        .map(([name]) => name)
        .sort()
    : [];
  let status: PlanStatus = 'clean';
  if (changes.some(proposes) || outputChanges.length > 0) status = 'changes';
  else if (drift.length > 0) status = 'drift';
  const summary: PlanSummary = {
    component: ctx.component,
    environment: ctx.environment,
    status,
    counts: countChanges(changes, drift.length),
    resources: [...changes, ...drift],
    outputChanges,
    startedAt: ctx.startedAt,
    finishedAt: ctx.finishedAt,
  };
  if (plan.errored === true) {
    summary.status = 'failed';
    summary.reason = 'plan-errored';
  }
  if (typeof plan.errored === 'boolean') summary.errored = plan.errored;
  if (typeof plan.applyable === 'boolean') summary.applyable = plan.applyable;
  if (typeof plan.complete === 'boolean') summary.complete = plan.complete;
  if (typeof plan.terraform_version === 'string' && TF_VERSION.test(plan.terraform_version)) {
    summary.terraformVersion = plan.terraform_version;
  }
  if (FORMAT_VERSION.test(plan.format_version)) summary.formatVersion = plan.format_version;
  return summary;
}

/**
 * The strings of a summary that came from the plan: what a leaked plan value could hide in. `reason`
 * is left out: it is one of Terraform's documented words or `unknown`, never plan text.
 */
export function planDerivedText(summary: PlanSummary): string {
  const parts: string[] = [...(summary.outputChanges ?? [])];
  for (const r of summary.resources ?? []) {
    parts.push(r.address, r.type, ...r.changedAttributes);
    for (const s of [r.module, r.name, r.provider, r.previousAddress]) if (s !== undefined) parts.push(s);
  }
  for (const d of summary.drifted ?? []) parts.push(d.address, d.type, ...d.attributes);
  for (const c of summary.checks?.items ?? []) {
    parts.push(c.address);
    if (c.message !== undefined) parts.push(c.message);
  }
  if (summary.errorExcerpt !== undefined) parts.push(summary.errorExcerpt);
  return parts.join('\n');
}

/** Every string of a summary except the agent's own hex ids and timestamps. */
export function allText(summary: PlanSummary): string {
  const parts: string[] = [summary.component, summary.environment, planDerivedText(summary)];
  for (const s of [summary.reason, summary.terraformVersion, summary.formatVersion, summary.git?.branch]) {
    if (s !== undefined) parts.push(s);
  }
  return parts.join('\n');
}
