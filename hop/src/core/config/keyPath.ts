/**
 * The one spelling of a key path in every config problem of the agent, the relay and the hub
 * (docs/decisions/250-one-config-loader.md): dots between keys, brackets around list indexes,
 * `listen.hop.port`, `upstreams[0].url`; the file itself is `(top level)`.
 */
export function keyPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s = typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p);
  return s || '(top level)';
}

/** Keys whose values a problem never repeats (a secret misplaced in a config is still a secret). */
const SECRET_KEY = /secret|token|password|passphrase/i;

/** How a problem shows the value it found: JSON, cut at 60 characters; a secret only by its length. */
export function shown(value: unknown, path: readonly PropertyKey[]): string {
  if (value === undefined) return 'nothing';
  const last = path.length ? String(path[path.length - 1]) : '';
  if (typeof value === 'string' && SECRET_KEY.test(last) && !/File$|Env$/.test(last))
    return `a ${value.length}-character string (not shown)`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  // A password in a URL (postgres://user:pw@host) is never repeated either.
  // (Cut first: the pattern's work then stays small whatever the file holds.)
  text = text.slice(0, 240).replace(/(\/\/[^/:@\s"]*):[^@/\s"]*@/g, '$1:***@');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The value at `path` inside parsed YAML (undefined when absent). Iterative. */
export function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let cur = raw;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}
