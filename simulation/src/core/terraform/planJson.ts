import { configurationOf, PROVIDERS } from './configuration.js';
import {
  addressOf,
  baseInfra,
  changeMutations,
  driftMutations,
  fleetMutations,
  infraContext,
  type Mutation,
  type Res,
} from './infra.js';

export interface PlanInput {
  component: string;
  environment: string;
  state: 'clean' | 'changes' | 'drift';
  variant: number;
  seed: number;
  extraResources: number;
  /** With `changes`: every extra resource changes too (`fleetMutations`). */
  extraChanges?: boolean;
  terraformVersion: string;
  /** RFC 3339; fixed by default so identical states give byte-identical plans. */
  timestamp: string;
}

export interface PlanCounts {
  add: number;
  change: number;
  destroy: number;
  drift: number;
  outputs: number;
}

type Values = Record<string, unknown>;

/**
 * A plan as `terraform show -json` prints it (format 1.2, Terraform 1.5+): planned_values,
 * resource_changes, resource_drift, output_changes, prior_state, configuration, variables — with the
 * site's secrets in every place real plans carry them. Deterministic in its input.
 */
export function buildPlan(p: PlanInput): { plan: Record<string, unknown>; counts: PlanCounts } {
  const c = infraContext(p.component, p.environment, p.seed, p.extraResources);
  const stored = baseInfra(c);
  const drift = p.state === 'drift' ? driftMutations(stored, p.variant) : [];
  const prior = apply(stored, drift).res;
  const { res: desired, replaced } = apply(
    prior,
    p.state === 'changes'
      ? [
          ...changeMutations(c, prior, p.variant),
          ...(p.extraChanges ? fleetMutations(c, prior, p.variant) : []),
        ]
      : [],
  );
  const priorBy = byAddress(prior);
  const desiredBy = byAddress(desired);
  const addresses = [...new Set([...priorBy.keys(), ...desiredBy.keys()])].sort();
  const counts: PlanCounts = { add: 0, change: 0, destroy: 0, drift: drift.length, outputs: 0 };
  const resourceChanges = addresses.map((a) => {
    const before = priorBy.get(a);
    const after = desiredBy.get(a);
    const r = (after ?? before)!;
    let actions: string[];
    let reason: string | undefined;
    if (before && after) {
      if (replaced.has(a)) {
        actions = ['delete', 'create'];
        reason = 'replace_because_cannot_update';
      } else
        actions = JSON.stringify(before.values) === JSON.stringify(after.values) ? ['no-op'] : ['update'];
    } else if (after) actions = ['create'];
    else {
      actions = ['delete'];
      reason = 'delete_because_no_resource_config';
    }
    if (actions.includes('create')) counts.add++;
    if (actions.includes('delete')) counts.destroy++;
    if (actions[0] === 'update') counts.change++;
    const fresh = actions.includes('create');
    return {
      ...identity(r),
      change: {
        actions,
        before: before ? before.values : null,
        after: after ? (fresh ? known(after) : after.values) : null,
        after_unknown: after && fresh ? unknownOf(after) : {},
        before_sensitive: before ? sensitiveShape(before.values, before.sensitive) : false,
        after_sensitive: after ? sensitiveShape(after.values, after.sensitive) : false,
        ...(replaced.has(a) ? { replace_paths: replaced.get(a)!.map((x) => [x]) } : {}),
      },
      ...(reason ? { action_reason: reason } : {}),
    };
  });
  const created = new Set(addresses.filter((a) => !priorBy.has(a) || replaced.has(a)));
  const outBefore = outputsOf(prior, new Set());
  const outAfter = outputsOf(desired, created);
  const outputChanges: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(outAfter)) {
    const b = outBefore[name]!;
    const same = JSON.stringify(b.value) === JSON.stringify(o.value) && !o.unknown;
    if (!same) counts.outputs++;
    outputChanges[name] = {
      actions: same ? ['no-op'] : ['update'],
      before: b.value,
      after: o.unknown ? null : o.value,
      after_unknown: o.unknown ?? false,
      before_sensitive: b.sensitive,
      after_sensitive: o.sensitive,
    };
  }
  const storedBy = byAddress(stored);
  const plan: Record<string, unknown> = {
    format_version: '1.2',
    terraform_version: p.terraformVersion,
    variables: {
      api_token: { value: c.secrets.apiToken },
      db_password: { value: c.secrets.dbPassword },
      environment: { value: p.environment },
      instance_type: { value: 't3.small' },
      region: { value: c.region },
    },
    planned_values: {
      outputs: Object.fromEntries(
        Object.entries(outAfter).map(([k, o]) => [
          k,
          o.unknown ? { sensitive: o.sensitive } : { sensitive: o.sensitive, value: o.value },
        ]),
      ),
      root_module: moduleTree(desired, (r) => (created.has(addressOf(r)) ? known(r) : r.values)),
    },
    ...(drift.length
      ? {
          resource_drift: drift.map((m) => {
            const a = m.kind === 'create' ? addressOf(m.res) : m.address;
            const before = storedBy.get(a)!;
            const after = priorBy.get(a)!;
            return {
              ...identity(after),
              change: {
                actions: ['update'],
                before: before.values,
                after: after.values,
                after_unknown: {},
                before_sensitive: sensitiveShape(before.values, before.sensitive),
                after_sensitive: sensitiveShape(after.values, after.sensitive),
              },
            };
          }),
        }
      : {}),
    resource_changes: resourceChanges,
    output_changes: outputChanges,
    prior_state: {
      format_version: '1.0',
      terraform_version: p.terraformVersion,
      values: {
        outputs: Object.fromEntries(
          Object.entries(outBefore).map(([k, o]) => [
            k,
            { sensitive: o.sensitive, value: o.value, type: o.type },
          ]),
        ),
        root_module: moduleTree(prior, (r) => r.values),
      },
    },
    configuration: configurationOf(c, p.extraResources),
    ...(drift.length
      ? {
          relevant_attributes: drift.map((m) => ({
            resource: m.kind === 'create' ? addressOf(m.res) : m.address,
            attribute: m.kind === 'update' ? Object.keys(m.set).slice(0, 1) : [],
          })),
        }
      : {}),
    timestamp: p.timestamp,
    applyable: counts.add + counts.change + counts.destroy + counts.outputs > 0,
    complete: true,
    errored: false,
  };
  return { plan, counts };
}

function apply(res: Res[], ms: Mutation[]): { res: Res[]; replaced: Map<string, string[]> } {
  const replaced = new Map<string, string[]>();
  let out = res.map((r) => ({ ...r, values: { ...r.values } }));
  for (const m of ms) {
    if (m.kind === 'create') out.push({ ...m.res, values: { ...m.res.values } });
    else if (m.kind === 'delete') out = out.filter((r) => addressOf(r) !== m.address);
    else {
      const r = out.find((x) => addressOf(x) === m.address);
      if (!r) continue;
      Object.assign(r.values, m.set);
      if (m.kind === 'replace') replaced.set(m.address, m.paths);
    }
  }
  return { res: out, replaced };
}

function byAddress(res: Res[]): Map<string, Res> {
  return new Map(res.map((r) => [addressOf(r), r]));
}

function identity(r: Res) {
  return {
    address: addressOf(r),
    ...(r.module ? { module_address: r.module } : {}),
    mode: 'managed',
    type: r.type,
    name: r.name,
    ...(r.index !== undefined ? { index: r.index } : {}),
    provider_name: PROVIDERS[r.provider],
  };
}

/** Values known before apply: computed attributes are left out (they are in after_unknown). */
function known(r: Res): Values {
  return Object.fromEntries(Object.entries(r.values).filter(([k]) => !(r.computed ?? []).includes(k)));
}

function unknownOf(r: Res): Values {
  return Object.fromEntries((r.computed ?? []).map((k) => [k, true]));
}

/**
 * Terraform's sensitivity mirror: `true` where a value is sensitive, objects and lists mirrored,
 * non-sensitive scalars left out of objects and `false` inside lists.
 */
export function sensitiveShape(values: Values, sensitive: string[] = []): Values {
  const mirror = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' && x !== null ? mirror(x) : false));
    if (typeof v === 'object' && v !== null) {
      const o: Values = {};
      for (const [k, x] of Object.entries(v)) if (typeof x === 'object' && x !== null) o[k] = mirror(x);
      return o;
    }
    return false;
  };
  const out = mirror(values) as Values;
  for (const k of sensitive) if (k in values) out[k] = true;
  return out;
}

function moduleTree(res: Res[], valuesOf: (r: Res) => Values) {
  const entry = (r: Res) => ({
    address: addressOf(r),
    mode: 'managed',
    type: r.type,
    name: r.name,
    ...(r.index !== undefined ? { index: r.index } : {}),
    provider_name: PROVIDERS[r.provider],
    schema_version: r.type === 'aws_instance' ? 1 : 0,
    values: valuesOf(r),
    sensitive_values: sensitiveShape(valuesOf(r), r.sensitive),
  });
  const sorted = [...res].sort((a, b) => addressOf(a).localeCompare(addressOf(b)));
  const modules = [...new Set(sorted.filter((r) => r.module).map((r) => r.module!))];
  return {
    resources: sorted.filter((r) => !r.module).map(entry),
    child_modules: modules.map((m) => ({
      address: m,
      resources: sorted.filter((r) => r.module === m).map(entry),
    })),
  };
}

interface OutputValue {
  value: unknown;
  sensitive: boolean;
  type: unknown;
  unknown?: unknown;
}

function outputsOf(res: Res[], created: Set<string>): Record<string, OutputValue> {
  const vpc = res.find((r) => r.type === 'aws_vpc')!;
  const db = res.find((r) => r.type === 'aws_db_instance')!;
  const webs = res.filter((r) => r.type === 'aws_instance' && r.name === 'web');
  const unknownIds = webs.map((w) => created.has(addressOf(w)));
  return {
    db_password: { value: db.values.password, sensitive: true, type: 'string' },
    vpc_id: { value: vpc.values.id, sensitive: false, type: 'string' },
    web_instance_ids: {
      value: webs.map((w, i) => (unknownIds[i] ? null : w.values.id)),
      sensitive: false,
      type: ['tuple', webs.map(() => 'string')],
      ...(unknownIds.some(Boolean) ? { unknown: unknownIds } : {}),
    },
  };
}
