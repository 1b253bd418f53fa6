import { createHash } from 'node:crypto';
import { canonical, type PlanSummary, type Sha256 } from '@driftline/protocol';

/** JSON with object keys sorted at every level and no whitespace: one value, one text. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(canonical(v));
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
