import {
  AgentFactsSchema,
  cellKey,
  DocCellSchema,
  DocRunSchema,
  docEntryKeyMismatch,
  isUnchangedPlan,
  READS_HUB_WINDOWS,
  READS_INLINE_PUBLICATIONS,
  READS_WIRE2_GIT_HEADS,
  READS_WIRE2_PUBLICATIONS,
} from '@driftline/protocol';
import type { AgentRow, CellRow, RunRow } from '../ports/HubStore.js';
import type { Touched } from './DocReader.js';
import { RunCells, splitCellKey } from './refCells.js';

/** What `materialise` reads: entries of the document as plain data (see `DocReader`). */
export interface DocEntries {
  entry(top: 'runs' | 'cells', key: string): unknown;
  keys(top: 'runs' | 'cells'): string[];
  facts(): unknown;
}

export interface Materialised {
  runs: RunRow[];
  /** Cell rows as the document now says; the caller decides against the hub's current row. */
  cells: Omit<CellRow, 'staleNotifiedFor'>[];
  facts: Partial<AgentRow> | null;
  /** Entries of the document that failed their schema: skipped, named here for the log. */
  invalid: string[];
  /**
   * Entries refused for their key (decision 570): a key that can key no entry (`Touched.refused`), or an
   * entry under another's key (a run not under its `runId`, a cell not under its environment/component).
   */
  refused: { key: string; problem: string }[];
}

/**
 * Turns the touched parts of an agent document into hub rows. Agent times are corrected by
 * `offsetMs` (T2); `receivedAt` is the hub's `now` (T1).
 */
export function materialise(
  doc: DocEntries,
  what: Touched,
  ctx: {
    site: string;
    agent: string;
    docId: string;
    now: number;
    offsetMs: number;
    /** The cell's current plan (hash and status), by document cell key (`environment/component[@ref]`). */
    prevPlan: (key: string) => { planHash: string | null; status: string } | null;
    /** Which cell each run belongs to (made here when not given). */
    runCells?: RunCells;
  },
): Materialised {
  const invalid: string[] = [];
  const refused = [...(what.refused ?? [])];
  const toHub = (t: number) => t - ctx.offsetMs;
  const runs: RunRow[] = [];
  const runCells = ctx.runCells ?? new RunCells(doc, what.cells);
  for (const id of what.runs) {
    const value = doc.entry('runs', id);
    const parsed = DocRunSchema.safeParse(value);
    if (!parsed.success) {
      if (value !== undefined) invalid.push(`runs.${id}`);
      continue;
    }
    const r = parsed.data;
    const mismatch = docEntryKeyMismatch('runs', id, r, null);
    if (mismatch) {
      refused.push({ key: `runs.${id}`, problem: mismatch });
      continue;
    }
    const planHash = r.summary.planHash ?? null;
    const atRef = runCells.atRef(r);
    runs.push({
      runId: r.runId,
      site: ctx.site,
      agent: ctx.agent,
      environment: r.environment,
      component: r.component,
      status: r.summary.status,
      counts: r.summary.counts ?? null,
      reason: r.summary.reason ?? null,
      plannedAt: toHub(Date.parse(r.summary.finishedAt)),
      receivedAt: ctx.now,
      unchanged: isUnchangedPlan(ctx.prevPlan(cellKey(r.environment, r.component, atRef)), {
        planHash,
        status: r.summary.status,
      }),
      summary: r.summary,
      detailBlob: r.detailBlob ?? null,
      docId: ctx.docId,
      ref: RunCells.refOf(r),
      commit: r.summary.git?.commit ?? null,
      atRef,
    });
  }
  const factsValue = doc.facts();
  const factsParsed = factsValue !== undefined ? AgentFactsSchema.safeParse(factsValue) : null;
  if (factsParsed && !factsParsed.success) invalid.push('facts');
  const facts = factsParsed?.success ? factsParsed.data : null;
  const cells: Materialised['cells'] = [];
  // Only the declared cadences feed cells other than the touched ones (their expected interval).
  const cellKeys = what.cadence ? new Set([...what.cells, ...doc.keys('cells')]) : what.cells;
  for (const key of cellKeys) {
    const split = splitCellKey(key);
    // An `@ref` cell is only read when it changed: a cadence change must not bring back an expired one.
    if (split?.atRef && !what.cells.has(key)) continue;
    const value = doc.entry('cells', key);
    const parsed = DocCellSchema.safeParse(value);
    if (!parsed.success || !split) {
      if (value !== undefined) invalid.push(`cells.${key}`);
      continue;
    }
    const c = parsed.data;
    const mismatch = docEntryKeyMismatch('cells', key, c, split.atRef);
    if (mismatch) {
      refused.push({ key: `cells.${key}`, problem: mismatch });
      continue;
    }
    // The cell's run, when this segment carries it, says how many checks fail (decision 420).
    const checks = runs.find((r) => r.runId === c.runId)?.summary.checks;
    cells.push({
      site: ctx.site,
      environment: c.environment,
      component: c.component,
      agent: ctx.agent,
      status: c.status,
      counts: c.counts ?? null,
      reason: c.reason ?? null,
      runId: c.runId,
      plannedAt: toHub(c.plannedAt),
      receivedAt: ctx.now,
      expectedIntervalS: facts?.cadenceS[key] ?? null,
      planHash: c.planHash ?? null,
      ref: c.ref ?? split.atRef,
      commit: c.commit ?? null,
      ...(c.needs ? { needs: [...c.needs] } : {}),
      atRef: split.atRef,
      ...(checks ? { checksFailed: checks.fail } : {}),
    });
  }
  return {
    runs,
    cells,
    facts:
      what.facts && facts
        ? {
            version: facts.version,
            cadenceS: { ...facts.cadenceS },
            contactIntervalS: facts.contactIntervalS ?? null,
            contactWindows: [...(facts.contactWindows ?? [])],
            hubWindows: [...(facts.hubWindows ?? [])],
            readsHubWindows: facts.reads?.includes(READS_HUB_WINDOWS) === true,
            queueDepth: facts.queueDepth,
            oldestUnsentAt: facts.oldestUnsentAt !== undefined ? toHub(facts.oldestUnsentAt) : null,
            upstream: facts.upstream ?? null,
            refs: facts.refs ? structuredClone(facts.refs) : {},
            sources: facts.sources ? structuredClone(facts.sources) : {},
            providers: [...(facts.providers ?? [])],
            platform: facts.platform ?? null,
            readsInline: facts.reads?.includes(READS_INLINE_PUBLICATIONS) === true,
            readsWire2Publications: facts.reads?.includes(READS_WIRE2_PUBLICATIONS) === true,
            readsWire2GitHeads: facts.reads?.includes(READS_WIRE2_GIT_HEADS) === true,
            factsReportedAt: toHub(facts.reportedAt),
            custodyOverdue: (facts.custodyOverdue ?? []).map((c) => ({
              ...c,
              oldestAt: toHub(c.oldestAt),
              since: toHub(c.since),
              episode: c.since,
            })),
          }
        : null,
    invalid,
    refused,
  };
}

/**
 * Whether a document's cell row replaces the hub's current one: the same agent's newer word always
 * does; another agent of the site only with a later plan (two agents planning one cell).
 */
export function replacesCell(
  prev: CellRow | null,
  next: Omit<CellRow, 'staleNotifiedFor'>,
  cellTouched: boolean,
): boolean {
  if (!prev) return true;
  // Only the declared cadence changed: not a new fact, so not a new history row either.
  if (!cellTouched) return prev.agent === next.agent && prev.expectedIntervalS !== next.expectedIntervalS;
  // The agent is its document's only writer, so the merged document holds its latest word.
  if (prev.agent === next.agent) return true;
  return next.plannedAt > prev.plannedAt;
}
