import { cellKey, type PlanSummary } from '@driftline/protocol';
import type { CellRef } from '../schedule/CellScheduler.js';

/**
 * Cells whose last plan was blocked for want of a provider build: planned again when one arrives.
 * Kept in memory only (a restart plans every cell anyway when `planOnStart` is on).
 */
export class ProviderWaits {
  private readonly cells = new Map<string, CellRef>();

  /** Notes the outcome of a plan of `cell`: waiting when blocked on providers, not waiting otherwise. */
  note(cell: CellRef, summary: PlanSummary): void {
    const key = cellKey(cell.environment, cell.component, cell.ref);
    if (summary.status === 'blocked' && summary.reason === 'providers-missing')
      // The commit it was blocked at is planned again, not whatever the ref points at by then.
      this.cells.set(key, { ...cell, ...(summary.git ? { commit: summary.git.commit } : {}) });
    else this.cells.delete(key);
  }

  /** The cells waiting for a provider build. */
  waiting(): CellRef[] {
    return [...this.cells.values()];
  }
}
