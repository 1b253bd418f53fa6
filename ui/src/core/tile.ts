import type { CellStatus, MatrixCell, PlanCounts } from '@driftline/protocol';
import { contactText } from './contact.js';
import { isStale } from './stale.js';
import { statusText } from './status.js';
import { formatAbsolute, formatAgo, formatDuration, formatLag } from './time.js';

/**
 * The few characters a matrix tile has room for beside its icon: the counts for changes (`+2~1-3`, imports
 * as `⇣1`), the drift count, or a short word. The tile's full text (status, counts, reason, ages) is its
 * accessible description.
 */
export function tileText(status: CellStatus, counts: PlanCounts | null | undefined): string {
  switch (status) {
    case 'changes': {
      if (!counts) return 'changes';
      // An import is a change Terraform's "Plan:" line counts apart ("1 to import"): ⇣ and how many, and
      // without the zeros of a plan that only imports.
      const imports = counts.import > 0 ? `⇣${counts.import}` : '';
      if (imports && counts.add + counts.change + counts.destroy === 0) return imports;
      return `+${counts.add}~${counts.change}-${counts.destroy}${imports}`;
    }
    case 'drift':
      return counts && counts.drift > 0 ? `drift ${counts.drift}` : 'drift';
    case 'redaction-failed':
      return 'redact';
    case 'no-data':
      return 'no data';
    default:
      return status;
  }
}

/** The tile's age: `3 h`, `12 d`; empty without a plan time. */
export function tileAge(plannedAt: string | null, nowMs: number): string {
  if (!plannedAt) return '';
  const ms = nowMs - Date.parse(plannedAt);
  return ms < 5000 ? 'now' : formatDuration(ms);
}

/** The first 7 characters of a commit id, as git abbreviates it. */
export const shortCommit = (commit: string | null | undefined): string => (commit ? commit.slice(0, 7) : '');

/**
 * Everything known about a cell in one sentence: the tile's accessible text. `changes +2 ~1 -3 · ship-7 ·
 * prod / compute · planned 3 h ago (…) · arrived 40 min later (…) · ref main commit abc1234 · stale`.
 */
export function tileSentence(cell: MatrixCell, nowMs: number, unreachableSince: string | null): string {
  const parts = [
    statusText(cell.status, cell.counts, cell.reason),
    `${cell.site} · ${cell.environment} / ${cell.component}`,
  ];
  if (cell.diagnostic) parts.push(cell.diagnostic);
  if (cell.needs?.length) parts.push(`needs ${cell.needs.join('; ')}`);
  if (cell.plannedAt)
    parts.push(`planned ${formatAgo(cell.plannedAt, nowMs)} (${formatAbsolute(cell.plannedAt)})`);
  if (cell.plannedAt && cell.receivedAt)
    parts.push(`${formatLag(cell.plannedAt, cell.receivedAt)} (${formatAbsolute(cell.receivedAt)})`);
  const refText = [cell.ref ? `ref ${cell.ref}` : '', cell.commit ? `commit ${shortCommit(cell.commit)}` : '']
    .filter(Boolean)
    .join(' ');
  if (refText) parts.push(refText);
  if (isStale(cell, nowMs)) parts.push('stale: older than twice its expected interval');
  const contact = contactText(cell, nowMs);
  if (contact) parts.push(contact);
  if (cell.siteUnreachable)
    parts.push(
      `last known — site unreachable${unreachableSince ? ` since ${formatAgo(unreachableSince, nowMs)}` : ''}`,
    );
  return parts.join(' · ');
}
