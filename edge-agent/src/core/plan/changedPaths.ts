import type { Json, PlanChange } from './planJson.js';

/** More paths than this for one resource collapse to top-level attribute names. */
export const MAX_PATHS_PER_RESOURCE = 256;

type Marker = Json | undefined;

const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function isObj(v: unknown): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function child(m: Marker, key: string | number): Marker {
  if (m === true) return true;
  if (typeof key === 'number') return Array.isArray(m) ? m[key] : undefined;
  return isObj(m) ? m[key] : undefined;
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (IDENT.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

export function deepEqual(a: Marker, b: Marker): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

interface Walk {
  out: string[];
  sensitiveNames: ReadonlySet<string>;
}

/**
 * Walks before/after side by side. Values are compared here and never copied out: only paths leave.
 * A path stops at anything marked sensitive (`before_sensitive`/`after_sensitive` = true) or named in
 * the configured sensitive attribute names, so keys of a sensitive map are never emitted.
 */
function walk(
  w: Walk,
  path: string,
  key: string | number | undefined,
  b: Marker,
  a: Marker,
  u: Marker,
  bs: Marker,
  as: Marker,
): void {
  if (w.out.length > MAX_PATHS_PER_RESOURCE) return;
  const sensitive = bs === true || as === true || (typeof key === 'string' && w.sensitiveNames.has(key));
  if (u === true || sensitive) {
    if (u === true || !deepEqual(b, a)) w.out.push(path);
    return;
  }
  const bNull = b === null || b === undefined;
  const aNull = a === null || a === undefined;
  if ((isObj(b) || bNull) && (isObj(a) || aNull) && (isObj(b) || isObj(a) || isObj(u))) {
    const keys = new Set([
      ...Object.keys(isObj(b) ? b : {}),
      ...Object.keys(isObj(a) ? a : {}),
      ...Object.keys(isObj(u) ? u : {}),
    ]);
    for (const k of [...keys].sort()) {
      walk(w, join(path, k), k, child(b, k), child(a, k), child(u, k), child(bs, k), child(as, k));
    }
    return;
  }
  if (
    (Array.isArray(b) || bNull) &&
    (Array.isArray(a) || aNull) &&
    (Array.isArray(b) || Array.isArray(a) || Array.isArray(u))
  ) {
    const n = Math.max(
      Array.isArray(b) ? b.length : 0,
      Array.isArray(a) ? a.length : 0,
      Array.isArray(u) ? u.length : 0,
    );
    for (let i = 0; i < n; i++) {
      walk(w, join(path, i), undefined, child(b, i), child(a, i), child(u, i), child(bs, i), child(as, i));
    }
    return;
  }
  if (!deepEqual(b, a) && path !== '') w.out.push(path);
}

function topLevel(change: PlanChange): string[] {
  const names = new Set<string>();
  for (const side of [change.before, change.after, change.after_unknown]) {
    if (!isObj(side)) continue;
    for (const [k, v] of Object.entries(side)) if (v !== null && v !== false) names.add(k);
  }
  return [...names].sort();
}

/**
 * Names (paths) of the attributes a change touches: `tags.env`, `ingress[0].cidr_blocks`.
 * A create or a delete lists top-level attribute names; an update or replace lists changed leaves.
 */
export function changedPaths(change: PlanChange | undefined, sensitiveNames: ReadonlySet<string>): string[] {
  if (!change) return [];
  const actions = change.actions ?? [];
  const replace = actions.includes('create') && actions.includes('delete');
  if (!replace && (actions.includes('create') || actions.includes('delete'))) return topLevel(change);
  const w: Walk = { out: [], sensitiveNames };
  walk(
    w,
    '',
    undefined,
    change.before,
    change.after,
    change.after_unknown,
    change.before_sensitive,
    change.after_sensitive,
  );
  if (w.out.length > MAX_PATHS_PER_RESOURCE) {
    return [...new Set(w.out.map((p) => p.split(/[.[]/, 1)[0] as string).filter((p) => p !== ''))].sort();
  }
  return w.out;
}
