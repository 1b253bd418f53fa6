import { ImmutableString } from '@automerge/automerge';

/**
 * Converts plain data into what the agent writes into its Automerge document: every string becomes a
 * scalar `ImmutableString` (collaborative text would cost an operation per character), `undefined`
 * fields are left out (Automerge refuses them).
 */
export function toDocValue(value: unknown): unknown {
  if (typeof value === 'string') return new ImmutableString(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toDocValue);
  if (value instanceof Uint8Array) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toDocValue(v);
  return out;
}
