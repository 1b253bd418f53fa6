import { createHash } from 'node:crypto';
import type { PlanSummary, Sha256 } from '@driftline/protocol';

/** JSON with object keys sorted at every level and no whitespace: one value, one text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const keys = Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * Fields of a summary that vary between runs of the same plan: times, exit code, git position and the
 * hash itself. They are left out of what `planHash` covers, so equal plans give equal hashes and the
 * store can say "unchanged as of <time>" instead of sending the plan again.
 */
const VOLATILE = ['startedAt', 'finishedAt', 'exitCode', 'git', 'planHash', 'errorExcerpt'] as const;

/** The canonical redacted detail: the summary (resources included) without its volatile fields. */
export function canonicalDetail(summary: PlanSummary): string {
  const basis: Record<string, unknown> = { ...summary };
  for (const k of VOLATILE) delete basis[k];
  return canonicalJson(basis);
}

export function sha256Hex(text: string): Sha256 {
  return createHash('sha256').update(text, 'utf8').digest('hex') as Sha256;
}
