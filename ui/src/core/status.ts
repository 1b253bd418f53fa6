import type { CellStatus, PlanCounts } from '@driftline/protocol';

/** How a status is shown: never colour alone (colour-blind readers, monochrome screens) — a word, an icon and a colour class. */
export interface StatusLook {
  label: string;
  icon: string;
  /** CSS class carrying the colour; paired with `label` and `icon`. */
  tone: string;
}

const LOOKS: Record<CellStatus, StatusLook> = {
  clean: { label: 'clean', icon: '✓', tone: 'st-clean' },
  changes: { label: 'changes', icon: '±', tone: 'st-changes' },
  drift: { label: 'drift', icon: '≈', tone: 'st-drift' },
  failed: { label: 'failed', icon: '✕', tone: 'st-failed' },
  locked: { label: 'locked', icon: '⊘', tone: 'st-locked' },
  'redaction-failed': { label: 'redaction failed', icon: '⚠', tone: 'st-redaction' },
  blocked: { label: 'blocked', icon: '⊟', tone: 'st-blocked' },
  'no-data': { label: 'no data', icon: '∅', tone: 'st-nodata' },
};

export function statusLook(status: CellStatus): StatusLook {
  return LOOKS[status];
}

/**
 * Terraform's own numbers, `+add ~change -destroy`, then the replacements apart: `+1 ~0 -1 (1 replaced)`.
 * The agent counts as Terraform's "Plan:" line does, so a replacement is already one of `add` and one of
 * `destroy`; `replace` says how many of those pairs are replacements and is never added on top.
 */
export function countsText(counts: PlanCounts | null | undefined): string {
  if (!counts) return '';
  const extra = countsExtras(counts);
  return `+${counts.add} ~${counts.change} -${counts.destroy}${extra.length ? ` (${extra.join(', ')})` : ''}`;
}

function countsExtras(counts: PlanCounts): string[] {
  const extra: string[] = [];
  if (counts.replace > 0) extra.push(`${counts.replace} replaced`);
  if (counts.import > 0) extra.push(`${counts.import} imported`);
  return extra;
}

/**
 * The counts in words, as Terraform's "Plan:" line says them, for a title or a screen reader:
 * `1 to add, 0 to change, 1 to destroy (1 replacement, counted in both)`.
 */
export function countsSentence(counts: PlanCounts | null | undefined): string {
  if (!counts) return '';
  const head = `${counts.import > 0 ? `${counts.import} to import, ` : ''}${counts.add} to add, ${counts.change} to change, ${counts.destroy} to destroy`;
  if (counts.replace === 0) return head;
  const r = counts.replace === 1 ? '1 replacement' : `${counts.replace} replacements`;
  return `${head} (${r}, counted in both add and destroy)`;
}

/** The one-line text of a cell's status, e.g. `changes +2 ~1 -1 (1 replaced)`, `failed: timeout`, `drift (3)`. */
export function statusText(
  status: CellStatus,
  counts: PlanCounts | null | undefined,
  reason?: string | null,
): string {
  const look = statusLook(status);
  switch (status) {
    case 'changes':
      return counts ? `${look.label} ${countsText(counts)}` : look.label;
    case 'drift':
      return counts && counts.drift > 0 ? `${look.label} (${counts.drift})` : look.label;
    case 'failed':
    case 'locked':
    case 'redaction-failed':
    case 'blocked':
      return reason ? `${look.label}: ${reason}` : look.label;
    default:
      return look.label;
  }
}
