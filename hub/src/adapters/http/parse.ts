import { WireError } from '@driftline/protocol';
import type { z } from 'zod';

/** Parses `value` with `schema` or throws `bad-query` naming the first wrong field. */
export function parseOr400<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const i = r.error.issues[0];
  throw new WireError('bad-query', `${what} '${i?.path.join('.') || '?'}': ${i?.message}`);
}
