import type { z } from 'zod';

/** A zod schema seen through its internal definition (zod 4 `_zod.def`), for walking by key path. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
}

const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Peels wrappers (optional, default, prefault, nullable, readonly, catch, pipe, lazy) off a schema. */
export function unwrap(s: z.ZodType): z.ZodType {
  let cur = s;
  for (let i = 0; i < 32; i++) {
    const d = defOf(cur);
    const next =
      d.innerType ?? (d.type === 'pipe' ? d.in : undefined) ?? (d.type === 'lazy' ? d.getter?.() : undefined);
    if (!next) return cur;
    cur = next;
  }
  return cur;
}

/** The kind of a schema once unwrapped: 'object', 'union', 'array', 'number', … */
export const kindOf = (s: z.ZodType): string => defOf(unwrap(s)).type;

/** The options of a union (empty for anything else). */
export const unionOptions = (s: z.ZodType): z.ZodType[] => {
  const d = defOf(unwrap(s));
  return d.type === 'union' ? (d.options ?? []) : [];
};

/** The keys of an object schema (empty for anything else). */
export const objectKeys = (s: z.ZodType): string[] => {
  const d = defOf(unwrap(s));
  return d.type === 'object' ? Object.keys(d.shape ?? {}) : [];
};

/**
 * The schemas that describe the value at `path` under `root`: one, or several where a union leaves it
 * open (every option that has the path). Iterative, bounded by the path's length.
 */
export function schemasAt(root: z.ZodType, path: readonly PropertyKey[]): z.ZodType[] {
  let level: z.ZodType[] = [root];
  for (const key of path) {
    const next: z.ZodType[] = [];
    const queue = [...level];
    for (let n = 0; queue.length > 0 && n < 256; n++) {
      const s = unwrap(queue.shift() as z.ZodType);
      const d = defOf(s);
      if (d.type === 'union') queue.push(...(d.options ?? []));
      else if (d.type === 'object' && typeof key === 'string' && d.shape?.[key]) next.push(d.shape[key]);
      else if (d.type === 'array' && typeof key === 'number' && d.element) next.push(d.element);
      else if (d.type === 'record' && d.valueType) next.push(d.valueType);
    }
    level = next;
  }
  return level;
}
