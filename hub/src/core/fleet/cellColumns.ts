import { staleAt as staleDeadline } from '@driftline/protocol';
import type { CellRow } from '../../ports/HubStore.js';

/**
 * A cell's attention kind apart from staleness (`protocol`'s `attentionKind` without the time-driven
 * `stale`), kept in the read model beside the status: `stuck-lock`, `failed`, `drift`, `blocked` or ''.
 * Later kinds (a failing check, a waived drift) are new values here, not new columns.
 */
export function baseKind(c: Pick<CellRow, 'status' | 'reason' | 'counts' | 'checksFailed'>): string {
  if (c.reason === 'stuck-lock') return 'stuck-lock';
  if (c.status === 'failed' || c.status === 'redaction-failed') return 'failed';
  if (c.status === 'drift' || (c.status === 'changes' && (c.counts?.drift ?? 0) > 0)) return 'drift';
  return kindBesideDrift(c);
}

/**
 * The kind a cell has once its drift is set aside (a waiver covers it, decision 421): a failing check
 * (decision 420), blocked, or none, in `attentionKind`'s order.
 */
export function kindBesideDrift(c: Pick<CellRow, 'status' | 'checksFailed'>): string {
  if ((c.checksFailed ?? 0) > 0) return 'check-failed';
  if (c.status === 'blocked') return 'blocked';
  return '';
}

/** Kinds a stale cell keeps (stale outranks the others): as an SQL list (constants, not input). */
export const OUTRANK_STALE = "('stuck-lock', 'failed', 'drift', 'check-failed')";

/** The attention kind with staleness: stale outranks `blocked` and nothing, as in `attentionKind`. */
export function kindWithStale(kind: string, stale: boolean): string {
  if (kind === 'stuck-lock' || kind === 'failed' || kind === 'drift' || kind === 'check-failed') return kind;
  return stale ? 'stale' : kind;
}

/** The indexed columns a store keeps beside a default cell's row (docs/decisions/400-fleet-read-model.md). */
export interface CellColumns {
  status: string;
  kind: string;
  plannedAt: number;
  /** protocol's `staleAt`, or null when the cell never goes stale on time alone. */
  staleAt: number | null;
  /** Stale when the hub received it; the sweeper sets it once the deadline passes (`advanceStale`). */
  stale: 0 | 1;
  /** The ref planned (null for none or ''): `refTotals` counts cells by it. */
  ref: string | null;
  receivedAt: number;
  /** The commit planned (null when unknown): the ref gate counts cells by it (decision 615). */
  commit: string | null;
}

export function cellColumns(c: CellRow): CellColumns {
  const staleAt = staleDeadline(c.plannedAt, c.expectedIntervalS);
  return {
    status: c.status,
    kind: baseKind(c),
    plannedAt: c.plannedAt,
    staleAt,
    stale: staleAt !== null && c.receivedAt > staleAt ? 1 : 0,
    ref: c.ref ? c.ref : null,
    receivedAt: c.receivedAt,
    commit: c.commit ?? null,
  };
}
