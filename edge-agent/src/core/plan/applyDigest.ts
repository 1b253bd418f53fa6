import { createHmac } from 'node:crypto';
import type { Sha256 } from '@driftline/protocol';

/**
 * The plan hash that decides "unchanged" (decision 200): an HMAC-SHA256 under the site's key over the
 * redacted detail and what the saved plan carries into an apply, values included (every proposed
 * resource change's before/after, every output change, the variables), and, for a cell that keeps its
 * plan file, the commit it was made from. Keyed, so the digest leaves the site and no value can be
 * checked against it without the key, which never does.
 */

const DOMAIN = 'driftline/plan-digest/v1';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;

/**
 * What an apply of the saved plan would do, read from plan JSON (Terraform's JSON output format):
 * `resource_changes` but those whose actions are only `no-op` (values a refresh saw change there are
 * drift, kept apart), `output_changes` and `variables`. `resource_drift` and `prior_state` are left out.
 */
export function applyBasis(plan: unknown): Json {
  const p = obj(plan) ?? {};
  const changes = Array.isArray(p.resource_changes) ? p.resource_changes : [];
  const resources: Json[] = [];
  for (const rc of changes) {
    const r = obj(rc);
    const c = obj(r?.change);
    if (!r || !c) continue;
    const actions = Array.isArray(c.actions) ? c.actions : [];
    if (actions.length === 1 && actions[0] === 'no-op') continue;
    resources.push({
      address: r.address,
      deposed: r.deposed,
      actions,
      before: c.before,
      after: c.after,
      after_unknown: c.after_unknown,
      replace_paths: c.replace_paths,
    });
  }
  return { resource_changes: resources, output_changes: p.output_changes, variables: p.variables };
}

type Frame = { raw: string } | { value: unknown };

/**
 * Writes `value` as canonical JSON (object keys sorted, no whitespace, undefined members left out) in
 * pieces to `out`, with an explicit stack: plan JSON is untrusted and may nest deep.
 */
export function writeCanonical(value: unknown, out: (piece: string) => void): void {
  const stack: Frame[] = [{ value }];
  while (stack.length > 0) {
    const f = stack.pop() as Frame;
    if ('raw' in f) {
      out(f.raw);
      continue;
    }
    const v = f.value;
    if (v === null || typeof v !== 'object') {
      out(JSON.stringify(v) ?? 'null');
      continue;
    }
    if (Array.isArray(v)) {
      stack.push({ raw: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] });
        if (i > 0) stack.push({ raw: ',' });
      }
      stack.push({ raw: '[' });
      continue;
    }
    const keys = Object.keys(v)
      .filter((k) => (v as Json)[k] !== undefined)
      .sort();
    stack.push({ raw: '}' });
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i] as string;
      stack.push({ value: (v as Json)[k] });
      stack.push({ raw: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` });
    }
    stack.push({ raw: '{' });
  }
}

/**
 * The keyed plan hash: HMAC-SHA256(siteKey, domain ‖ redacted detail ‖ commit ‖ apply basis), hex.
 * `commit` is given only for a cell that keeps its plan file (a newer commit is then a new run).
 */
export function keyedPlanHash(
  siteKey: Uint8Array,
  canonicalDetail: string,
  plan: unknown,
  commit?: string,
): Sha256 {
  const h = createHmac('sha256', siteKey);
  h.update(`${DOMAIN}\u0000`);
  h.update(canonicalDetail, 'utf8');
  h.update(`\u0000${commit ?? ''}\u0000`);
  writeCanonical(applyBasis(plan), (piece) => h.update(piece, 'utf8'));
  return h.digest('hex') as Sha256;
}
