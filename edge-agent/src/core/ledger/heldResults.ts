import { type DocCell, type DocRun, isFailureStatus } from '@driftline/protocol';
import type { HeldCellRow, HeldRunRow, RunStorage } from '../../ports/AgentStorage.js';
import type { HeldAfter } from '../doc/agentDoc.js';
import { canonicalJson } from '../plan/canonical.js';

/**
 * Results held out of the document (docs/decisions/370-one-change-per-push.md). A batch recorded while
 * more results are coming (a cron round under way) commits its run rows and, instead of a document
 * change, a row per cell it leaves (the cell as readers see it) and per changed plan's run entry. They
 * are written into the document as one change: with the next batch that writes (the round's last, or one
 * answering a plan request), or when the uplink builds its next bundle (`pending()`): at once when a
 * changed plan's wait ends (a scheduled round's news waits for it, at most min(`sync.newsHoldS`, a tenth of
 * the cell's cadence); other news goes with the next push: `newsWait.ts`, decision 485), once held
 * `holdConfirmationsMs` when only confirmations are. A quiet round is one change
 * whatever the batcher did (each change costs ~55 B on the wire after brotli, each push ~2.5 kB with its
 * receipt and ack); a changed plan's detail blob waits for its run entry.
 */

/** What is held: the cells as `recordRuns` reads them, run entries, and when each was first held. */
export interface HeldResults extends HeldAfter {
  /** When each cell's first held result was recorded (ledger clock), by cell key. */
  heldAt: Map<string, number>;
  /** When each changed plan's run entry was held (ledger clock), by run id. */
  runHeldAt: Map<string, number>;
  /**
   * Until when each changed plan may wait (ledger clock: when it was held plus its `newsWaitMs`), by run
   * id; absent: not at all. Stored with its row, so a restart keeps it waiting until then (`loadHeld`).
   */
  runWaitUntil: Map<string, number>;
  /**
   * Until when each held cell's confirmation may wait when a cron round ran it (ledger clock: its first
   * hold plus half the shortest cadence it was held with, `confirmationWaitMs`), by cell key; absent:
   * `confirmationsMs` after its first hold. Kept in memory only: after a restart, `confirmationsMs` holds.
   */
  heldUntil: Map<string, number>;
}

export const nothingHeld = (): HeldResults => ({
  cells: new Map(),
  runs: new Map(),
  heldAt: new Map(),
  runHeldAt: new Map(),
  runWaitUntil: new Map(),
  heldUntil: new Map(),
});

/** How long held confirmations may wait (decision 370); a changed plan's wait is its own (decision 485). */
export interface HoldLimits {
  confirmationsMs: number;
}

/**
 * What storage holds (after a restart: held results are durable like the run rows they belong to). The
 * rows are this ledger's own canonical JSON of values it built: read back as written, not re-validated
 * (a schema would drop fields it does not list). A changed plan's stored deadline holds (decision 485),
 * capped at `now` plus its own wait and `newsHoldMs`: a clock that jumped backwards, or a hold turned
 * down since, never keeps news longer than that from start-up; a deadline past goes with the next push.
 */
export function loadHeld(
  storage: Pick<RunStorage, 'heldCells' | 'heldRuns'>,
  now: number,
  newsHoldMs: number,
): HeldResults {
  const held = nothingHeld();
  for (const r of storage.heldCells()) {
    held.cells.set(r.cellKey, JSON.parse(r.cell) as DocCell);
    held.heldAt.set(r.cellKey, r.heldAt);
  }
  for (const r of storage.heldRuns()) {
    held.runs.set(r.runId, JSON.parse(r.run) as DocRun);
    held.runHeldAt.set(r.runId, r.heldAt);
    if (r.waitUntil === null || r.waitUntil <= r.heldAt) continue; // no wait: it goes with the next push
    const cap = now + Math.min(newsHoldMs, r.waitUntil - r.heldAt);
    held.runWaitUntil.set(r.runId, Math.min(r.waitUntil, cap));
  }
  return held;
}

/**
 * After a batch was held: what is held now (`after`, from `recordRuns`, taken as it is) with each cell's
 * first hold time, and the rows to upsert (the cells and run entries this batch added or changed).
 * `waits`: how long this batch's changed plans may wait, by run id (absent: not at all); `cellWaits`: how
 * long this batch's cells may wait when a cron round ran them, by cell key (absent: `confirmationsMs`).
 */
export function holdBatch(
  before: HeldResults,
  after: HeldAfter,
  epoch: number,
  now: number,
  waits: ReadonlyMap<string, number> = new Map(),
  cellWaits: ReadonlyMap<string, number> = new Map(),
): { held: HeldResults; cells: HeldCellRow[]; runs: HeldRunRow[] } {
  const heldAt = new Map<string, number>();
  const heldUntil = new Map<string, number>();
  const cells: HeldCellRow[] = [];
  const runs: HeldRunRow[] = [];
  for (const [cellKey, cell] of after.cells) {
    const at = before.heldAt.get(cellKey) ?? now;
    heldAt.set(cellKey, at);
    const wait = cellWaits.get(cellKey);
    const earlier = before.heldUntil.get(cellKey);
    const until = wait === undefined ? earlier : Math.min(earlier ?? Number.POSITIVE_INFINITY, at + wait);
    if (until !== undefined) heldUntil.set(cellKey, until);
    if (before.cells.get(cellKey) !== cell)
      cells.push({ cellKey, epoch, cell: canonicalJson(cell), heldAt: at });
  }
  const runHeldAt = new Map<string, number>();
  const runWaitUntil = new Map<string, number>();
  for (const [runId, run] of after.runs) {
    const at = before.runHeldAt.get(runId);
    runHeldAt.set(runId, at ?? now);
    const wait = waits.get(runId) ?? 0;
    const until = at === undefined ? (wait > 0 ? now + wait : undefined) : before.runWaitUntil.get(runId);
    if (until !== undefined) runWaitUntil.set(runId, until);
    if (at === undefined)
      runs.push({ runId, epoch, run: canonicalJson(run), heldAt: now, waitUntil: until ?? null });
  }
  return { held: { ...after, heldAt, runHeldAt, runWaitUntil, heldUntil }, cells, runs };
}

/**
 * Whether the next bundle should carry the held results now: a failed plan at once; a changed plan once
 * its wait is over (0 unless a scheduled round ran it: docs/decisions/485-news-waits-for-its-round.md);
 * confirmations once held `confirmationsMs`, or half their cadence when a cron round ran them (the round's
 * last result writes them all before that; a round whose plans outlast their cadence never ends).
 */
export function heldDue(held: HeldResults, now: number, limits: HoldLimits): boolean {
  // every held run has its cell held with it; a run alone (not expected) is not kept waiting
  if (held.runs.size > 0 && held.cells.size === 0) return true;
  for (const run of held.runs.values()) if (isFailureStatus(run.summary.status)) return true;
  for (const runId of held.runHeldAt.keys()) if (now >= (held.runWaitUntil.get(runId) ?? now)) return true;
  for (const [key, at] of held.heldAt) if (now >= confirmationDue(held, key, at, limits)) return true;
  return false;
}

/** When a held cell's confirmation goes at the latest (ledger clock). */
function confirmationDue(held: HeldResults, key: string, at: number, limits: HoldLimits): number {
  return Math.min(at + limits.confirmationsMs, held.heldUntil.get(key) ?? Number.POSITIVE_INFINITY);
}

/** What `edge-agent status` says of the held results: counts, the oldest hold, when they go at the latest. */
export function heldSummary(held: HeldResults, limits: HoldLimits) {
  let since: number | null = null;
  let dueBy: number | null = null;
  const due = (t: number) => {
    if (dueBy === null || t < dueBy) dueBy = t;
  };
  for (const [key, at] of held.heldAt) {
    if (since === null || at < since) since = at;
    due(confirmationDue(held, key, at, limits));
  }
  for (const [runId, at] of held.runHeldAt) due(held.runWaitUntil.get(runId) ?? at);
  return { cells: held.cells.size, runs: held.runs.size, since, dueBy };
}
