import type { Json, PlanChange, PlanJson } from '../plan/planJson.js';
import { MIN_SECRET_LENGTH, type SecretValue } from './scan.js';

function isObj(v: unknown): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Lines of a multi-line value this long or longer are searched for on their own too (a PEM body). */
const MIN_LINE_LENGTH = 6;

/**
 * Collects values by source. Every walk is iterative (an explicit stack), so plan JSON nested
 * thousands deep cannot overflow the call stack.
 */
class Collector {
  readonly byValue = new Map<string, string>();
  constructor(readonly sensitiveNames: ReadonlySet<string>) {}

  add(value: string, source: string): void {
    if (value.length < MIN_SECRET_LENGTH) return;
    // A sensitive source wins over a plain one: it is never exempted as an instance key.
    if (!this.byValue.has(value) || source.startsWith('sensitive')) this.byValue.set(value, source);
    if (value.includes('\n')) {
      for (const line of value.split('\n')) {
        const t = line.trim();
        if (t.length >= MIN_LINE_LENGTH && t !== value) this.add(t, source);
      }
    }
  }

  /** Every string and number under `v`, and every map key (as `<source>-key`). */
  all(v: Json | undefined, source: string): void {
    const stack: (Json | undefined)[] = [v];
    while (stack.length > 0) {
      const x = stack.pop();
      if (typeof x === 'string') this.add(x, source);
      else if (typeof x === 'number' && Number.isFinite(x)) this.add(String(x), source);
      else if (Array.isArray(x)) for (const y of x) stack.push(y);
      else if (isObj(x)) {
        for (const [k, y] of Object.entries(x)) {
          this.add(k, `${source}-key`);
          stack.push(y);
        }
      }
    }
  }

  /**
   * Under an attribute value: everything where `marker` (Terraform's `*_sensitive` mirror) is true or
   * the attribute's name is configured sensitive; elsewhere only the map keys below the top level
   * (`tags["…"]`, keys of a map attribute), which are values too.
   */
  marked(v: Json | undefined, marker: Json | undefined): void {
    const stack: { v: Json | undefined; m: Json | undefined; top: boolean }[] = [{ v, m: marker, top: true }];
    while (stack.length > 0) {
      const f = stack.pop()!;
      if (f.v === undefined || f.v === null) continue;
      if (f.m === true) {
        this.all(f.v, 'sensitive-attribute');
      } else if (Array.isArray(f.v)) {
        const ms = Array.isArray(f.m) ? f.m : [];
        f.v.forEach((x, i) => {
          stack.push({ v: x, m: ms[i], top: false });
        });
      } else if (isObj(f.v)) {
        for (const [k, x] of Object.entries(f.v)) {
          if (!f.top) this.add(k, 'attribute-key');
          if (this.sensitiveNames.has(k)) this.all(x, 'sensitive-attribute');
          else stack.push({ v: x, m: isObj(f.m) ? f.m[k] : undefined, top: false });
        }
      }
    }
  }

  change(c: PlanChange | undefined): void {
    if (!c) return;
    this.marked(c.before, c.before_sensitive);
    this.marked(c.after, c.after_sensitive);
  }

  /** planned_values / prior_state: modules of resources with `values` + `sensitive_values`, and outputs. */
  values(root: Json | undefined): void {
    if (!isObj(root)) return;
    // planned_values holds outputs and root_module itself; prior_state holds them under `values`.
    const values = isObj(root.values) ? root.values : root;
    const outputs = values.outputs;
    if (isObj(outputs)) {
      for (const o of Object.values(outputs))
        if (isObj(o) && o.sensitive === true) this.all(o.value, 'sensitive-output');
    }
    const modules: (Json | undefined)[] = [values.root_module];
    while (modules.length > 0) {
      const m = modules.pop();
      if (!isObj(m)) continue;
      if (Array.isArray(m.resources)) {
        for (const r of m.resources) if (isObj(r)) this.marked(r.values, r.sensitive_values);
      }
      if (Array.isArray(m.child_modules)) modules.push(...m.child_modules);
    }
  }

  /** Literals in configuration: `constant_value` of any expression, variable `default`s. */
  configuration(v: Json | undefined): void {
    const stack: (Json | undefined)[] = [v];
    while (stack.length > 0) {
      const x = stack.pop();
      if (Array.isArray(x)) stack.push(...x);
      else if (isObj(x)) {
        for (const [k, y] of Object.entries(x)) {
          if (k === 'constant_value' || k === 'default') this.all(y, 'configuration');
          else stack.push(y);
        }
      }
    }
  }
}

/** Names of root module variables the configuration declares `sensitive = true`. */
function sensitiveVariables(plan: PlanJson): Set<string> {
  const root = isObj(plan.configuration) ? plan.configuration.root_module : undefined;
  const vars = isObj(root) ? root.variables : undefined;
  const out = new Set<string>();
  if (isObj(vars))
    for (const [name, v] of Object.entries(vars)) if (isObj(v) && v.sensitive === true) out.add(name);
  return out;
}

/**
 * Every string or number of 4+ characters in this plan that must not appear in what leaves the site:
 * all variable values, configuration literals, sensitive attributes (marked by Terraform or named in
 * config) and sensitive outputs, wherever they occur, and every map key inside those and inside
 * attribute values and drift. Multi-line values count line by line as well.
 *
 * Which of them may still appear inside the plan's own identifiers is the scan's decision
 * (`PlanIdentifiers`), made against what the summary actually carries.
 */
export function collectSecretValues(
  plan: PlanJson,
  sensitiveNames: ReadonlySet<string>,
  publicVariables: readonly string[] = [],
): SecretValue[] {
  const c = new Collector(sensitiveNames);
  const secretVars = sensitiveVariables(plan);
  const open = new Set(publicVariables);
  for (const [name, v] of Object.entries(plan.variables ?? {})) {
    if (!isObj(v)) continue;
    const source = secretVars.has(name)
      ? 'sensitive-variable'
      : open.has(name)
        ? 'public-variable'
        : 'variable';
    c.all(v.value, source);
  }
  c.configuration(plan.configuration);
  for (const rc of plan.resource_changes ?? []) c.change(rc?.change);
  for (const rc of plan.resource_drift ?? []) c.change(rc?.change);
  for (const oc of Object.values(plan.output_changes ?? {})) {
    if (!oc) continue;
    if (oc.before_sensitive === true) c.all(oc.before, 'sensitive-output');
    if (oc.after_sensitive === true) c.all(oc.after, 'sensitive-output');
    c.change(oc);
  }
  c.values(plan.planned_values);
  c.values(plan.prior_state);
  return [...c.byValue].map(([value, source]) => ({ value, source }));
}
