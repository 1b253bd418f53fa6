import { type DocCell, DocCellSchema } from '@driftline/protocol';
import type { HeldConfirmationRow, RunStorage } from '../../ports/AgentStorage.js';
import { canonicalJson } from '../plan/canonical.js';

/**
 * Confirmations held out of the document (docs/decisions/370-one-change-per-push.md). An unchanged
 * re-plan recorded while more results are coming (a cron round under way) is kept as a row per cell,
 * committed with the run's own row, and written into the document with the round's last result, with
 * any other result's change, or by the next push once held longer than `holdConfirmationsMs`: a quiet
 * round is one Automerge change whatever the batcher did (each change costs ~55 B on the wire after
 * brotli, its hash, checksum and message being entropy).
 */

export interface HeldCell {
  cell: DocCell;
  /** When the cell's first held confirmation was recorded (ledger clock). */
  heldAt: number;
}

/** The held confirmations storage keeps (after a restart: they are durable like the runs they confirm). */
export function loadHeld(storage: Pick<RunStorage, 'heldConfirmations'>): Map<string, HeldCell> {
  const out = new Map<string, HeldCell>();
  for (const r of storage.heldConfirmations())
    out.set(r.cellKey, { cell: DocCellSchema.parse(JSON.parse(r.cell)) as DocCell, heldAt: r.heldAt });
  return out;
}

/** The cells alone, as `recordRuns` reads them. */
export function heldCells(held: ReadonlyMap<string, HeldCell>): Map<string, DocCell> {
  return new Map([...held].map(([k, h]) => [k, h.cell]));
}

/**
 * After a batch was held: the held map it leaves (`after`, cells by key) with each cell's first hold
 * time, and the rows to upsert (the cells this batch changed).
 */
export function holdBatch(
  before: ReadonlyMap<string, HeldCell>,
  after: ReadonlyMap<string, DocCell>,
  epoch: number,
  now: number,
): { held: Map<string, HeldCell>; rows: HeldConfirmationRow[] } {
  const held = new Map<string, HeldCell>();
  const rows: HeldConfirmationRow[] = [];
  for (const [cellKey, cell] of after) {
    const old = before.get(cellKey);
    const h = { cell, heldAt: old?.heldAt ?? now };
    held.set(cellKey, h);
    if (old?.cell !== cell) rows.push({ cellKey, epoch, cell: canonicalJson(cell), heldAt: h.heldAt });
  }
  return { held, rows };
}

/** Whether a push should write the held confirmations now: the oldest waited `holdMs`. */
export function heldTooLong(held: ReadonlyMap<string, HeldCell>, now: number, holdMs: number): boolean {
  for (const h of held.values()) if (now - h.heldAt >= holdMs) return true;
  return false;
}
