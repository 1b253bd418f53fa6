/**
 * Bounds on parsed plan JSON (S8 in docs/architecture.md#invariants), checked before anything walks it. Real plans nest a few
 * dozen levels (modules, nested blocks, objects in lists) and their map keys are names or short
 * values; far past either is hostile or broken input, refused as a `failed` run with a clear reason.
 */

/** Deepest nesting of arrays and objects accepted. */
export const MAX_PLAN_DEPTH = 512;
/** Longest object key accepted, in characters. */
export const MAX_PLAN_KEY_LENGTH = 8192;

export type PlanLimitResult =
  | { ok: true }
  | { ok: false; reason: 'plan-too-deep' | 'plan-key-too-long'; message: string };

/** Walks the whole value once with an explicit stack (no recursion) and stops at the first excess. */
export function checkPlanLimits(
  value: unknown,
  limits: { maxDepth?: number; maxKeyLength?: number } = {},
): PlanLimitResult {
  const maxDepth = limits.maxDepth ?? MAX_PLAN_DEPTH;
  const maxKey = limits.maxKeyLength ?? MAX_PLAN_KEY_LENGTH;
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= maxDepth) {
      return {
        ok: false,
        reason: 'plan-too-deep',
        message: `the plan JSON nests deeper than ${maxDepth} levels; no real plan does, so it is refused unread`,
      };
    }
    if (Array.isArray(v)) {
      for (const x of v) stack.push({ v: x, depth: depth + 1 });
      continue;
    }
    for (const [k, x] of Object.entries(v)) {
      if (k.length > maxKey) {
        return {
          ok: false,
          reason: 'plan-key-too-long',
          message: `the plan JSON has an object key of ${k.length} characters (limit ${maxKey}); it is refused unread`,
        };
      }
      stack.push({ v: x, depth: depth + 1 });
    }
  }
  return { ok: true };
}
