import type { CellStatus, PlanCounts } from '@driftline/protocol';

/** How a status is shown: never colour alone (issue 7) — a word, an icon and a colour class. */
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
  'no-data': { label: 'no data', icon: '∅', tone: 'st-nodata' },
};

export function statusLook(status: CellStatus): StatusLook {
  return LOOKS[status];
}

/** `+a ~c -d` (replacements count as both an add and a destroy in Terraform's summary line). */
export function countsText(counts: PlanCounts | null | undefined): string {
  if (!counts) return '';
  const add = counts.add + counts.replace;
  const destroy = counts.destroy + counts.replace;
  return `+${add} ~${counts.change} -${destroy}`;
}

/** The one-line text of a cell's status, e.g. `changes +2 ~1 -0`, `failed: timeout`, `drift (3)`. */
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
      return reason ? `${look.label}: ${reason}` : look.label;
    default:
      return look.label;
  }
}
