import type { Json, PlanChange, PlanJson } from '../plan/planJson.js';
import { MIN_SECRET_LENGTH, type SecretValue } from './scan.js';

function isObj(v: unknown): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class Collector {
  readonly byValue = new Map<string, string>();
  constructor(readonly sensitiveNames: ReadonlySet<string>) {}

  /** Every string leaf under `v` (including map keys' values, not keys). */
  all(v: Json | undefined, source: string): void {
    if (typeof v === 'string') {
      // A sensitive source wins over a plain one: it is never exempted.
      if (v.length >= MIN_SECRET_LENGTH && (!this.byValue.has(v) || source.startsWith('sensitive'))) {
        this.byValue.set(v, source);
      }
    } else if (Array.isArray(v)) {
      for (const x of v) this.all(x, source);
    } else if (isObj(v)) {
      for (const x of Object.values(v)) this.all(x, source);
    }
  }

  /** String leaves under `v` where `marker` (Terraform's `*_sensitive` mirror) is true, or under a sensitive name. */
  marked(v: Json | undefined, marker: Json | undefined): void {
    if (v === undefined || v === null) return;
    if (marker === true) {
      this.all(v, 'sensitive-attribute');
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        this.marked(x, Array.isArray(marker) ? marker[i] : undefined);
      });
    } else if (isObj(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (this.sensitiveNames.has(k)) this.all(x, 'sensitive-attribute');
        else this.marked(x, isObj(marker) ? marker[k] : undefined);
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
    this.module(values.root_module);
  }

  private module(m: Json | undefined, depth = 0): void {
    if (!isObj(m) || depth > 64) return;
    if (Array.isArray(m.resources)) {
      for (const r of m.resources) if (isObj(r)) this.marked(r.values, r.sensitive_values);
    }
    if (Array.isArray(m.child_modules)) for (const c of m.child_modules) this.module(c, depth + 1);
  }

  /** Literals in configuration: `constant_value` of any expression, variable `default`s. */
  configuration(v: Json | undefined, depth = 0): void {
    if (depth > 200) return;
    if (Array.isArray(v)) {
      for (const x of v) this.configuration(x, depth + 1);
    } else if (isObj(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'constant_value' || k === 'default') this.all(x, 'configuration');
        else this.configuration(x, depth + 1);
      }
    }
  }
}

/**
 * Every string of 4+ characters in this plan that must not appear in what leaves the site
 * (issue 3 4a): all variable values, configuration literals, sensitive attributes (marked by
 * Terraform or named in config) and sensitive outputs, wherever they occur.
 *
 * `exempt` are the plan's own structural names (resource names, types, instance keys, module names,
 * output names, component and environment) that the summary carries by construction. A *non-sensitive*
 * variable or literal equal to one of them is not searched for, since Terraform refuses sensitive
 * values as `for_each` keys; a sensitive value is searched for regardless.
 */
export function collectSecretValues(
  plan: PlanJson,
  sensitiveNames: ReadonlySet<string>,
  exempt: ReadonlySet<string> = new Set(),
): SecretValue[] {
  const c = new Collector(sensitiveNames);
  for (const v of Object.values(plan.variables ?? {})) if (isObj(v)) c.all(v.value, 'variable');
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
  const out: SecretValue[] = [];
  for (const [value, source] of c.byValue) {
    if (!source.startsWith('sensitive') && exempt.has(value)) continue;
    out.push({ value, source });
  }
  return out;
}
