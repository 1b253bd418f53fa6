import * as A from '@automerge/automerge';
import { type DocCell, type DocConfirmed, overlayConfirmed } from '@driftline/protocol';

/**
 * Unchanged re-plans written apart from their cells (docs/decisions/330-unchanged-replan-heartbeat.md):
 * `confirmed[cellKey]` holds `{at, n, commit?}` (protocol's `DocConfirmed`) beside the packed cell, so an
 * unchanged plan costs its cell key and ~30 bytes instead of the whole cell (its plan hash, run id and
 * commit travel once, with the plan). Readers apply the entry to the cell (`overlayConfirmed`).
 */

/** The document's `confirmed` map as the change proxy shows it. */
type ConfirmedMap = Record<string, A.ImmutableString | undefined>;
// biome-ignore lint/suspicious/noExplicitAny: an Automerge change proxy
type Proxy = any;

/** The cell as readers see it: the packed `base` with its confirmed entry applied. */
export function withConfirmed(base: DocCell | undefined, entry: unknown): DocCell | undefined {
  return base && entry !== undefined ? (overlayConfirmed(base, entry) as DocCell) : base;
}

/**
 * The entry that makes readers see `cell` on top of the packed `base`, or null when only rewriting the
 * cell can say it (the plan is not the base's, or its time is earlier than the base's).
 */
export function confirmedEntry(base: DocCell | undefined, cell: DocCell): DocConfirmed | null {
  if (!base || base.runId !== cell.runId || cell.plannedAt < base.plannedAt) return null;
  const n = cell.confirmations - base.confirmations;
  if (n < 1) return null;
  return {
    at: cell.plannedAt,
    n,
    ...(cell.commit && cell.commit !== base.commit ? { commit: cell.commit } : {}),
  };
}

/**
 * Writes `cell` for `key`: as a confirmed entry over the packed `base` when `apart` and it can, else
 * by rewriting the packed cell (and dropping a confirmed entry it folds in). Returns the packed cell
 * now in the document (the base of a later run of the same cell in this change).
 */
export function writeCell(
  d: Proxy,
  key: string,
  base: DocCell | undefined,
  cell: DocCell,
  apart: boolean,
  pack: (c: DocCell) => A.ImmutableString,
): DocCell {
  const entry = apart ? confirmedEntry(base, cell) : null;
  if (entry && base) {
    if (!d.confirmed) d.confirmed = {};
    (d.confirmed as ConfirmedMap)[key] = new A.ImmutableString(JSON.stringify(entry));
    return base;
  }
  d.cells[key] = pack(cell);
  if (d.confirmed && (d.confirmed as ConfirmedMap)[key] !== undefined) delete d.confirmed[key];
  return cell;
}
