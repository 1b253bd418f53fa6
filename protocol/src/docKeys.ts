import { refNameProblem } from './refs.js';
import { cellKey } from './run.js';

/**
 * The keys of an agent document's `runs` and `cells` maps, judged before anything reads them as data
 * (docs/decisions/570-hostile-document-keys.md). A hostile agent can write any key with Automerge's
 * low-level calls, `__proto__` included, and Automerge's `toJS`/`materialize` then hand back an object
 * whose prototype is that entry; a name like `constructor` or `toString` reads as a function from any
 * plain object that lacks it. So: a run is keyed by its run id (a ULID), a cell by
 * `environment/component[@ref]`, and environment and component names are the agent config's names minus
 * the members of `Object.prototype` (and `prototype`).
 */

/** An environment's or component's name, as the agent's config accepts it. */
export const ENTRY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Names every plain JavaScript object answers to: never a name of ours. */
const RESERVED = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** Why `name` is not an acceptable environment or component name, or null when it is fine. */
export function entryNameProblem(name: string): string | null {
  if (!ENTRY_NAME.test(name)) return "must be 1-63 characters of letters, digits, '.', '_' or '-'";
  if (RESERVED.has(name))
    return `"${name}" is reserved (every JavaScript object answers to it): choose another name`;
  return null;
}

/** Why `key` cannot key an entry of `top` (`runs` or `cells`), or null when it can. */
export function docKeyProblem(top: 'runs' | 'cells', key: string): string | null {
  if (top === 'runs') return ULID.test(key) ? null : 'a run is keyed by its run id (a ULID)';
  const at = key.indexOf('@');
  const base = at < 0 ? key : key.slice(0, at);
  const slash = base.indexOf('/');
  if (slash < 0) return 'a cell is keyed environment/component[@ref]';
  const env = entryNameProblem(base.slice(0, slash));
  if (env) return `environment ${env}`;
  const comp = entryNameProblem(base.slice(slash + 1));
  if (comp) return `component ${comp}`;
  const ref = at < 0 ? null : refNameProblem(key.slice(at + 1));
  return ref;
}

/**
 * Why an entry (already valid against its schema) does not belong under `key`, or null when it does:
 * a run's key is its `runId` and its names are good names, a cell's key is
 * `cellKey(environment, component, atRef)` (whose names `docKeyProblem` judged).
 */
export function docEntryKeyMismatch(
  top: 'runs' | 'cells',
  key: string,
  entry: { runId?: string; environment: string; component: string },
  atRef: string | null,
): string | null {
  if (top === 'runs') {
    if (entry.runId !== key) return `keyed "${key}" but its runId is "${String(entry.runId)}"`;
    const env = entryNameProblem(entry.environment);
    if (env) return `environment ${env}`;
    const comp = entryNameProblem(entry.component);
    return comp ? `component ${comp}` : null;
  }
  const want = cellKey(entry.environment, entry.component, atRef);
  return want === key ? null : `keyed "${key}" but it is the cell "${want}"`;
}
