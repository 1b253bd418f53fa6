/** A `module` block of a root module, as far as a need for it says: its name, source and version. */
export interface ModuleCall {
  name: string;
  source: string;
  version?: string;
}

const CALL = /(?:^|\n)[ \t]*module[ \t]+"([A-Za-z0-9_-]{1,64})"[ \t]*\{/g;
const SOURCE = /(?:^|\n)[ \t]*source[ \t]*=[ \t]*"([^"\n\\]{1,500})"/;
const VERSION = /(?:^|\n)[ \t]*version[ \t]*=[ \t]*"([0-9A-Za-z.~<>=!,+ -]{1,100})"/;

/**
 * The module calls of one HCL file, by a bounded, linear scan: each `module "<name>" {` at the start of
 * a line, then its `source` and `version` string literals before the next module call (at most 8 KiB
 * on). A source or version that is an expression is not read.
 */
export function moduleCalls(text: string): ModuleCall[] {
  const heads = [...text.matchAll(CALL)].slice(0, 500);
  return heads.flatMap((m, k) => {
    const start = (m.index ?? 0) + m[0].length;
    const next = heads[k + 1]?.index ?? text.length;
    const body = text.slice(start, Math.min(next, start + 8192));
    const source = SOURCE.exec(body)?.[1];
    if (source === undefined) return [];
    const version = VERSION.exec(body)?.[1]?.trim();
    return [{ name: m[1] as string, source, ...(version ? { version } : {}) }];
  });
}
