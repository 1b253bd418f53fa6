import type { Json, PlanChange } from './planJson.js';

/** More paths than this for one resource collapse to top-level attribute names. */
export const MAX_PATHS_PER_RESOURCE = 256;
/** A path stops this many segments deep: the change is reported at that depth. */
export const MAX_PATH_SEGMENTS = 32;

/**
 * Stands for a map key that is not shaped like a schema attribute name. Keys of maps (`tags`,
 * `labels`, a `map(string)` attribute) are values, so they never leave the site; see
 * docs/decisions/060-threat-model.md for why a placeholder rather than a keyed hash.
 */
export const KEY_PLACEHOLDER = '<key>';

/** Schema attribute names: lower snake case, as every provider schema spells them, and short. */
const ATTRIBUTE_NAME = /^[a-z_][a-z0-9_]{0,63}$/;

type Marker = Json | undefined;

function isObj(v: unknown): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function child(m: Marker, key: string | number): Marker {
  if (m === true) return true;
  if (typeof key === 'number') return Array.isArray(m) ? m[key] : undefined;
  return isObj(m) ? m[key] : undefined;
}

/** `tags.env`, `ingress[0]`, and `tags[<key>]` for a key that is not an attribute name. */
function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (ATTRIBUTE_NAME.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${KEY_PLACEHOLDER}]`;
}

/** Structural equality, walked with an explicit stack. */
export function deepEqual(a: Marker, b: Marker): boolean {
  const stack: [Marker, Marker][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
    } else if (isObj(x) && isObj(y)) {
      const kx = Object.keys(x);
      if (kx.length !== Object.keys(y).length) return false;
      for (const k of kx) {
        if (!Object.hasOwn(y, k)) return false;
        stack.push([x[k], y[k]]);
      }
    } else return false;
  }
  return true;
}

interface Frame {
  path: string;
  depth: number;
  key: string | number | undefined;
  b: Marker;
  a: Marker;
  u: Marker;
  bs: Marker;
  as: Marker;
}

function children(f: Frame): Frame[] {
  const { b, a, u, bs, as } = f;
  const bNull = b === null || b === undefined;
  const aNull = a === null || a === undefined;
  const frame = (k: string | number): Frame => ({
    path: join(f.path, k),
    depth: f.depth + 1,
    key: k,
    b: child(b, k),
    a: child(a, k),
    u: child(u, k),
    bs: child(bs, k),
    as: child(as, k),
  });
  if ((isObj(b) || bNull) && (isObj(a) || aNull) && (isObj(b) || isObj(a) || isObj(u))) {
    const keys = new Set([
      ...Object.keys(isObj(b) ? b : {}),
      ...Object.keys(isObj(a) ? a : {}),
      ...Object.keys(isObj(u) ? u : {}),
    ]);
    return [...keys].sort().map(frame);
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
    return Array.from({ length: n }, (_, i) => frame(i));
  }
  return [];
}

/**
 * Walks before/after side by side, depth first in key order, with an explicit stack. Values are
 * compared here and never copied out: only paths leave. A path stops at anything marked sensitive
 * (`before_sensitive`/`after_sensitive` = true) or named in the configured sensitive attribute names,
 * so keys of a sensitive map are never emitted, and at `MAX_PATH_SEGMENTS`.
 */
function walk(root: Frame, sensitiveNames: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const emit = (p: string) => {
    if (!seen.has(p)) {
      seen.add(p);
      out.push(p);
    }
  };
  const stack: Frame[] = [root];
  while (stack.length > 0 && out.length <= MAX_PATHS_PER_RESOURCE) {
    const f = stack.pop()!;
    const sensitive =
      f.bs === true || f.as === true || (typeof f.key === 'string' && sensitiveNames.has(f.key));
    if (f.u === true || sensitive) {
      if (f.u === true || !deepEqual(f.b, f.a)) emit(f.path);
      continue;
    }
    const kids = f.depth < MAX_PATH_SEGMENTS ? children(f) : [];
    if (kids.length > 0) {
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i] as Frame);
    } else if (f.path !== '' && !deepEqual(f.b, f.a)) {
      emit(f.path);
    }
  }
  return out;
}

function topLevel(change: PlanChange): string[] {
  const names = new Set<string>();
  for (const side of [change.before, change.after, change.after_unknown]) {
    if (!isObj(side)) continue;
    for (const [k, v] of Object.entries(side)) if (v !== null && v !== false) names.add(join('', k));
  }
  return [...names].sort();
}

/**
 * Names (paths) of the attributes a change touches: `tags.env`, `ingress[0].cidr_blocks`,
 * `tags[<key>]`. A create or a delete lists top-level attribute names; an update or replace lists
 * changed leaves. Only schema-shaped names and list indexes appear: any other map key is replaced by
 * `KEY_PLACEHOLDER`.
 */
export function changedPaths(change: PlanChange | undefined, sensitiveNames: ReadonlySet<string>): string[] {
  if (!change) return [];
  const actions = change.actions ?? [];
  const replace = actions.includes('create') && actions.includes('delete');
  if (!replace && (actions.includes('create') || actions.includes('delete'))) return topLevel(change);
  const out = walk(
    {
      path: '',
      depth: 0,
      key: undefined,
      b: change.before,
      a: change.after,
      u: change.after_unknown,
      bs: change.before_sensitive,
      as: change.after_sensitive,
    },
    sensitiveNames,
  );
  if (out.length > MAX_PATHS_PER_RESOURCE) {
    return [...new Set(out.map((p) => p.split(/[.[]/, 1)[0] as string).filter((p) => p !== ''))].sort();
  }
  return out;
}
