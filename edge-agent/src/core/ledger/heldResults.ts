import { type DocCell, type DocRun, isFailureStatus } from '@driftline/protocol';
import type { HeldCellRow, HeldRunRow, RunStorage } from '../../ports/AgentStorage.js';
import type { HeldAfter } from '../doc/agentDoc.js';
import { canonicalJson } from '../plan/canonical.js';

/**
 * Results held out of the document (docs/decisions/370-one-change-per-push.md). A batch recorded while
 * more results are coming (a cron round under way) commits its run rows and, instead of a document
 * change, a row per cell it leaves (the cell as readers see it) and per changed plan's run entry. They
 * are written into the document as one change: with the next batch that writes (the round's last, or one
 * answering a plan request), or when the uplink builds its next bundle (`pending()`) once the first was
 * held `holdRoundMs` (`sync.roundHoldS`), changed plans as unchanged ones (decision 395). A round is one
 * change and one push whatever the batcher did (each change costs ~55 B on the wire after brotli, each
 * push ~2.5 kB with its receipt and ack); a changed plan's detail blob waits for its run entry.
 */

/** What is held: the cells as `recordRuns` reads them, run entries, and when each cell was first held. */
export interface HeldResults extends HeldAfter {
  /** When each cell's first held result was recorded (ledger clock), by cell key. */
  heldAt: Map<string, number>;
}

export const nothingHeld = (): HeldResults => ({ cells: new Map(), runs: new Map(), heldAt: new Map() });

/**
 * What storage holds (after a restart: held results are durable like the run rows they belong to). The
 * rows are this ledger's own canonical JSON of values it built: read back as written, not re-validated
 * (a schema would drop fields it does not list).
 */
export function loadHeld(storage: Pick<RunStorage, 'heldCells' | 'heldRuns'>): HeldResults {
  const held = nothingHeld();
  for (const r of storage.heldCells()) {
    held.cells.set(r.cellKey, JSON.parse(r.cell) as DocCell);
    held.heldAt.set(r.cellKey, r.heldAt);
  }
  for (const r of storage.heldRuns()) held.runs.set(r.runId, JSON.parse(r.run) as DocRun);
  return held;
}

/**
 * After a batch was held: what is held now (`after`, from `recordRuns`, taken as it is) with each cell's
 * first hold time, and the rows to upsert (the cells and run entries this batch added or changed).
 */
export function holdBatch(
  before: HeldResults,
  after: HeldAfter,
  epoch: number,
  now: number,
): { held: HeldResults; cells: HeldCellRow[]; runs: HeldRunRow[] } {
  const heldAt = new Map<string, number>();
  const cells: HeldCellRow[] = [];
  const runs: HeldRunRow[] = [];
  for (const [cellKey, cell] of after.cells) {
    const at = before.heldAt.get(cellKey) ?? now;
    heldAt.set(cellKey, at);
    if (before.cells.get(cellKey) !== cell)
      cells.push({ cellKey, epoch, cell: canonicalJson(cell), heldAt: at });
  }
  for (const [runId, run] of after.runs)
    if (!before.runs.has(runId)) runs.push({ runId, epoch, run: canonicalJson(run), heldAt: now });
  return { held: { ...after, heldAt }, cells, runs };
}

/**
 * Whether the next bundle should carry the held results now: once the first was held `holdMs` (they go
 * with the round's last result before that), or at once when a plan failed. A changed plan waits as a
 * confirmation does: a round's news goes up as one push, not one push and ack per changed plan
 * (docs/decisions/395-a-round-goes-up-together.md).
 */
export function heldDue(held: HeldResults, now: number, holdMs: number): boolean {
  // every held run has its cell held with it; a run alone (not expected) is not kept waiting
  if (held.runs.size > 0 && held.cells.size === 0) return true;
  for (const run of held.runs.values()) if (isFailureStatus(run.summary.status)) return true;
  for (const at of held.heldAt.values()) if (now - at >= holdMs) return true;
  return false;
}

/** What `edge-agent status` says of the held results: counts, the oldest hold, when they go at the latest. */
export function heldSummary(held: HeldResults, holdMs: number) {
  let since: number | null = null;
  for (const at of held.heldAt.values()) if (since === null || at < since) since = at;
  return {
    cells: held.cells.size,
    runs: held.runs.size,
    since,
    dueBy: since === null ? null : since + holdMs,
  };
}
