import * as A from '@automerge/automerge';
import {
  type AgentDoc,
  AgentDocSchema,
  type AgentFacts,
  cellKey,
  type DocApply,
  type DocCell,
  DocCellSchema,
  type DocRun,
  isUnchangedPlan,
  type PlanSummary,
  packDocEntry as packJson,
  plainAgentDoc,
  unpackDocEntry,
} from '@driftline/protocol';
import { canonicalJson } from '../plan/canonical.js';
import { withConfirmed, writeCell } from './confirmApart.js';
import { toDocValue } from './docValues.js';
import { openRequests, stampRequests } from './requestStamps.js';

/** A packed entry as the document holds it: its canonical JSON as one scalar string (not text). */
const packDocEntry = (value: DocRun | DocCell) => new A.ImmutableString(packJson(value));

/**
 * Pure operations on the agent's Automerge document (protocol's AgentDoc shape). Every function returns
 * the new document; persisting it is the store's job. Runs and cells are written packed, each its
 * canonical JSON as one scalar string (an ImmutableString: decision 008); facts and bundle states stay maps.
 */

/**
 * The agent's document as Automerge holds it (protocol's AgentDoc once unpacked): runs and cells are
 * packed strings (maps in documents written before decision 008), facts, bundle states and apply
 * records are maps of plain values.
 */
export interface StoredAgentDoc {
  site: A.ImmutableString | string;
  agent: A.ImmutableString | string;
  epoch: number;
  cells: Record<string, A.ImmutableString | DocCell>;
  runs: Record<string, A.ImmutableString | DocRun>;
  facts?: Record<string, unknown>;
  bundles?: Record<string, unknown>;
  applies?: Record<string, unknown>;
  requests?: Record<string, unknown>;
  /** Unchanged re-plans written apart from their cells (`confirmApart.ts`, decision 330). */
  confirmed?: Record<string, A.ImmutableString>;
  sealedAt?: number;
}
export type AgentAutomergeDoc = A.Doc<StoredAgentDoc>;

export interface RunInput {
  runId: string;
  summary: PlanSummary;
  /** sha256 of the stored detail blob, when one was stored. */
  detailBlob?: string;
  recordedAt: number;
  /** Consecutive locked results for this cell, this one included. */
  lockedStreak?: number;
  /** A ref other than the component's default: the run's cell is `environment/component@ref`. */
  cellRef?: string;
  /** Whether a plan equal to the cell's may only confirm the cell's run (`RecordRunInput.mayConfirm`). */
  mayConfirm?: (runId: string) => boolean;
}

export function newEpochDoc(
  site: string,
  agent: string,
  epoch: number,
  seedCells: Record<string, DocCell> = {},
  actor?: string,
): AgentAutomergeDoc {
  const init = A.init<StoredAgentDoc>(actor ? { actor } : undefined);
  return A.change(init, { message: `epoch ${epoch}`, time: 0 }, (d) => {
    d.site = new A.ImmutableString(site);
    d.agent = new A.ImmutableString(agent);
    d.epoch = epoch;
    d.cells = Object.fromEntries(Object.entries(seedCells).map(([k, c]) => [k, packDocEntry(c)]));
    d.runs = {};
  });
}

/**
 * true when `summary` finds exactly what the cell already holds (protocol's `isUnchangedPlan`, the rule
 * the hub applies too): only a confirmation is recorded.
 */
export function isUnchanged(cell: DocCell | undefined, summary: PlanSummary): boolean {
  return isUnchangedPlan(cell, summary);
}

/**
 * Records one run. A run whose plan equals the cell's current one only moves `plannedAt` and counts a
 * confirmation ("unchanged as of"); any other run adds a run entry and replaces the cell.
 */
export function recordRun(
  doc: AgentAutomergeDoc,
  input: RunInput,
  facts?: AgentFacts,
): { doc: AgentAutomergeDoc; unchanged: boolean } {
  const r = recordRuns(doc, [input], facts);
  return { doc: r.doc, unchanged: r.unchanged[0] ?? false };
}

/**
 * Records runs that finished together as one Automerge change (one change header, hash and dependency
 * set for the batch instead of one per run: loading and merging cost follow the number of changes).
 * `knownFacts` is the plain value of the document's facts when the caller holds it: comparing against
 * it instead of reading the facts back through Automerge's proxies (a read per cadence entry, each a
 * seek in the op set) was most of the cost of recording a run. `confirmApart`: the hub reads the
 * `confirmed` map (its ack said so), so an unchanged plan is written there instead of rewriting its cell
 * (decision 330).
 */
export function recordRuns(
  doc: AgentAutomergeDoc,
  inputs: readonly RunInput[],
  facts?: AgentFacts,
  knownFacts?: Record<string, unknown> | null,
  confirmApart = false,
): { doc: AgentAutomergeDoc; unchanged: boolean[] } {
  const unchanged: boolean[] = [];
  const last = inputs.at(-1);
  if (!last) return { doc, unchanged };
  // Cells written earlier in this batch: a second run of one cell compares against the first. `bases`:
  // the packed cell under each (what a confirmed entry is written over).
  const written = new Map<string, DocCell | undefined>();
  const bases = new Map<string, DocCell | undefined>();
  // Requests this batch may answer (decision 300), read once: outside the change, from `doc`.
  const open = openRequests(doc.requests);
  const next = A.change(
    doc,
    {
      message: inputs.length === 1 ? `run ${last.runId}` : `runs ${inputs[0]?.runId}..${last.runId}`,
      time: Math.floor(last.recordedAt / 1000),
    },
    (d) => {
      for (const input of inputs) {
        const key = cellKey(input.summary.environment, input.summary.component, input.cellRef);
        const current = written.has(key) ? written.get(key) : readCell(doc, key);
        const same =
          isUnchanged(current, input.summary) &&
          (!input.mayConfirm || !current || input.mayConfirm(current.runId));
        unchanged.push(same);
        const cell = same && current ? confirmed(current, input) : replaced(input);
        if (!same) d.runs[input.runId] = packDocEntry(docRun(input));
        const base = bases.has(key) ? bases.get(key) : readPackedCell(doc, key);
        bases.set(key, writeCell(d, key, base, cell, confirmApart && same, packDocEntry));
        written.set(key, cell);
        if (open.length > 0)
          stampRequests(d, open, {
            environment: input.summary.environment,
            component: input.summary.component,
            cellRef: input.cellRef,
            ref: input.summary.ref,
            commit: input.summary.git?.commit,
            startedAt: Date.parse(input.summary.startedAt),
            finishedAt: Date.parse(input.summary.finishedAt),
            runId: cell.runId,
          });
      }
      if (facts) writeFacts(d, facts, knownFacts ?? undefined);
    },
  );
  return { doc: next, unchanged };
}

function confirmed(current: DocCell, input: RunInput): DocCell {
  return {
    ...current,
    unchangedSince: current.unchangedSince ?? current.plannedAt,
    plannedAt: Date.parse(input.summary.finishedAt),
    confirmations: current.confirmations + 1,
    // Another commit can plan the same: the cell says which commit was planned last (a ref gate asks).
    ...(input.summary.git?.commit ? { commit: input.summary.git.commit } : {}),
  };
}

function docRun(input: RunInput): DocRun {
  const { resources: _omit, ...summary } = input.summary;
  return {
    runId: input.runId as DocRun['runId'],
    environment: input.summary.environment,
    component: input.summary.component,
    summary,
    ref: input.summary.ref,
    detailBlob: input.detailBlob as DocRun['detailBlob'],
    recordedAt: input.recordedAt,
  };
}

function replaced(input: RunInput): DocCell {
  return {
    environment: input.summary.environment,
    component: input.summary.component,
    runId: input.runId as DocRun['runId'],
    status: input.summary.status,
    ref: input.summary.ref,
    commit: input.summary.git?.commit,
    needs: input.summary.needs,
    counts: input.summary.counts,
    reason: input.summary.reason,
    planHash: input.summary.planHash,
    plannedAt: Date.parse(input.summary.finishedAt),
    confirmations: 0,
    lockedStreak: input.lockedStreak || undefined,
  };
}

/** The document's facts as plain data (read once when a document is loaded; see `recordRuns`). */
export function plainFacts(doc: AgentAutomergeDoc): Record<string, unknown> | null {
  return doc.facts ? (JSON.parse(JSON.stringify(doc.facts)) as Record<string, unknown>) : null;
}

/** What the document's facts are after `writeFacts(d, facts)` on a document whose facts were `current`. */
export function mergeFacts(
  current: Record<string, unknown> | null,
  facts: AgentFacts,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(facts)) {
    if (v === undefined) delete out[k];
    else out[k] = JSON.parse(JSON.stringify(v));
  }
  return out;
}

/** Writes the agent's facts alone (at start-up: the hub learns its cells and cadences before any run). */
export function updateFacts(doc: AgentAutomergeDoc, facts: AgentFacts, at: number): AgentAutomergeDoc {
  return A.change(doc, { message: 'facts', time: Math.floor(at / 1000) }, (d) => writeFacts(d, facts));
}

/**
 * Writes where the approvals of one run stand (`applies[runId]`), a plain map like the bundle states: it
 * is small, and the hub shows its journey.
 */
export function writeApply(doc: AgentAutomergeDoc, apply: DocApply, at: number): AgentAutomergeDoc {
  return A.change(doc, { message: `apply ${apply.runId}`, time: Math.floor(at / 1000) }, (d) => {
    if (!d.applies) d.applies = {};
    d.applies[apply.runId] = toDocValue(apply);
  });
}

/**
 * Writes that a hub plan request arrived (`requests[requestId]`): the agent's own signed word, by which
 * the hub counts it delivered (docs/decisions/230-time-a-hop-cannot-forge.md).
 */
export function writePlanRequest(
  doc: AgentAutomergeDoc,
  r: {
    requestId: string;
    environment: string;
    component: string;
    state: string;
    receivedAt: number;
    detail: string | null;
    /** The ref and commit it asks for: the run that answers it plans them (decision 300). */
    ref?: string;
    commit?: string;
  },
): AgentAutomergeDoc {
  const entry = {
    environment: r.environment,
    component: r.component,
    state: r.state,
    receivedAt: r.receivedAt,
    ...(r.ref ? { ref: r.ref.slice(0, 200) } : {}),
    ...(r.commit ? { commit: r.commit.slice(0, 64) } : {}),
  };
  return A.change(doc, { message: `request ${r.requestId}`, time: Math.floor(r.receivedAt / 1000) }, (d) => {
    if (!d.requests) d.requests = {};
    d.requests[r.requestId] = toDocValue(r.detail ? { ...entry, detail: r.detail.slice(0, 300) } : entry);
  });
}

export function sealEpoch(doc: AgentAutomergeDoc, at: number): AgentAutomergeDoc {
  return A.change(doc, { message: 'sealed', time: Math.floor(at / 1000) }, (d) => {
    d.sealedAt = at;
  });
}

/** The cell as readers see it: its packed entry with its confirmed entry applied (decision 330). */
export function readCell(doc: AgentAutomergeDoc, key: string): DocCell | undefined {
  return withConfirmed(readPackedCell(doc, key), doc.confirmed?.[key]);
}

/** The cell entry alone, without its confirmed entry. */
function readPackedCell(doc: AgentAutomergeDoc, key: string): DocCell | undefined {
  const cell = doc.cells?.[key];
  if (cell === undefined) return undefined;
  // Packed (a string, or bytes in the first packed form), or a map entry of an epoch written before packing.
  return unpackDocEntry(cell) as DocCell;
}

/** The document as plain, validated data. */
export function readDoc(doc: AgentAutomergeDoc): AgentDoc {
  return AgentDocSchema.parse(plainAgentDoc(A.toJS(doc)));
}

/** The latest result per cell, to seed the next epoch. */
export function latestCells(doc: AgentAutomergeDoc): Record<string, DocCell> {
  const out: Record<string, DocCell> = {};
  for (const key of Object.keys(doc.cells ?? {})) {
    const cell = readCell(doc, key);
    if (cell) out[key] = DocCellSchema.parse(cell);
  }
  return out;
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/**
 * Writes only the facts that changed: rewriting the whole object (its cadence map has an entry per cell)
 * on every run would put hundreds of operations into each change and bloat the epoch.
 */
// biome-ignore lint/suspicious/noExplicitAny: an Automerge change proxy
function writeFacts(d: any, facts: AgentFacts, known?: Record<string, unknown>): void {
  // The map, even empty, says this agent confirms the plan requests it receives (decision 230).
  if (!d.requests) d.requests = {};
  // And this one that it writes unchanged re-plans apart once its hub says it reads them (decision 330).
  if (!d.confirmed) d.confirmed = {};
  if (!d.facts) {
    d.facts = toDocValue(facts);
    return;
  }
  const current = known ?? (JSON.parse(JSON.stringify(d.facts)) as Record<string, unknown>);
  for (const [k, v] of Object.entries(facts)) {
    const old = current[k];
    if (v === undefined) {
      if (k in current) delete d.facts[k];
    } else if (same(old, v)) {
      // unchanged: no operation
    } else if (
      v &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      old &&
      typeof old === 'object' &&
      !Array.isArray(old)
    ) {
      // Maps (cadence per cell): touch only the entries that differ.
      for (const [kk, vv] of Object.entries(v)) {
        if (!same((old as Record<string, unknown>)[kk], vv)) d.facts[k][kk] = toDocValue(vv);
      }
      for (const kk of Object.keys(old)) if (!(kk in v)) delete d.facts[k][kk];
    } else {
      d.facts[k] = toDocValue(v);
    }
  }
}
