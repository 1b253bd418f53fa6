import * as A from '@automerge/automerge';
import type { HeartbeatFacts } from '@driftline/hop/heartbeat';
import {
  type AgentDoc,
  AgentDocSchema,
  type AgentFacts,
  type DocApply,
  type DocCell,
  DocCellSchema,
  type DocRun,
  packDocEntry as packJson,
  plainAgentDoc,
  unpackDocEntry,
} from '@driftline/protocol';
import { canonicalJson } from '../plan/canonical.js';
import { withConfirmed, writeCell } from './confirmApart.js';
import { toDocValue } from './docValues.js';
import { heartbeatCells, heartbeatRound, withHeartbeat } from './heartbeatRound.js';
import { docRun, planDone, planRuns } from './planRuns.js';
import { answers, openRequests, type PlanStart, stampRequests, stampStarts } from './requestStamps.js';
import type { RunInput } from './runInput.js';
import type { AgentAutomergeDoc, StoredAgentDoc } from './storedDoc.js';

/** A packed entry as the document holds it: its canonical JSON as one scalar string (not text). */
const packDocEntry = (value: DocRun | DocCell) => new A.ImmutableString(packJson(value));

/**
 * Pure operations on the agent's Automerge document (protocol's AgentDoc shape). Every function returns
 * the new document; persisting it is the store's job. Runs and cells are written packed, each its
 * canonical JSON as one scalar string (an ImmutableString: decision 008); facts and bundle states stay maps.
 */

/**
 * Kept importable from here; defined in runInput.ts (which planRuns.ts reads) and storedDoc.ts (which
 * heartbeatRound.ts and presence.ts read) without this file.
 */
export type { AgentAutomergeDoc, RunInput, StoredAgentDoc };

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

/** Results held out of the document (docs/decisions/370-one-change-per-push.md). */
export interface HeldCells {
  /** Cells as readers see them, not yet written: written before this batch's runs when it writes. */
  cells: ReadonlyMap<string, DocCell>;
  /** Run entries of changed plans held with their cells, by run id. */
  runs?: ReadonlyMap<string, DocRun>;
  /** Whether this batch may be held too (more results are coming), unless it answers a plan request. */
  hold: boolean;
  /** The change's time when the batch has no runs (writing held results alone). */
  at?: number;
}

/** What a batch left held: every cell and run entry not written yet (empty once written). */
export interface HeldAfter {
  cells: Map<string, DocCell>;
  runs: Map<string, DocRun>;
}

/**
 * Records runs that finished together as one Automerge change (one change header, hash and dependency
 * set for the batch instead of one per run: loading and merging cost follow the number of changes).
 * `knownFacts` is the plain value of the document's facts when the caller holds it: comparing against
 * it instead of reading the facts back through Automerge's proxies (a read per cadence entry, each a
 * seek in the op set) was most of the cost of recording a run. `confirmApart`: the hub reads the
 * `confirmed` map (its ack said so), so an unchanged plan is written there instead of rewriting its cell
 * (decision 330). `heldBefore`: results held out of the document so far; when `heldBefore.hold` and the
 * batch answers no plan request, nothing is written and `held` names what is held after it (decision
 * 370); else the held results are written in this change and `held` is empty.
 */
export function recordRuns(
  doc: AgentAutomergeDoc,
  inputs: readonly RunInput[],
  facts?: AgentFacts,
  knownFacts?: Record<string, unknown> | null,
  confirmApart: ConfirmMode = false,
  heldBefore: HeldCells = { cells: new Map(), hold: false },
): { doc: AgentAutomergeDoc; unchanged: boolean[]; held: HeldAfter } {
  const last = inputs.at(-1);
  const prior = heldBefore.cells;
  const priorRuns = heldBefore.runs ?? new Map<string, DocRun>();
  const planned = planRuns(inputs, (key) => prior.get(key) ?? readCell(doc, key));
  const unchanged = planned.map((p) => p.same);
  // Requests this batch may answer (decision 300), read once: outside the change, from `doc`.
  const open = openRequests(doc.requests);
  const answersOne = planned.some((p) => open.some((r) => answers(r, planDone(p))));
  if (heldBefore.hold && !answersOne) {
    const held: HeldAfter = { cells: new Map(prior), runs: new Map(priorRuns) };
    for (const p of planned) {
      held.cells.set(p.key, p.cell);
      if (!p.same) held.runs.set(p.input.runId, docRun(p.input));
    }
    return { doc, unchanged, held };
  }
  const none: HeldAfter = { cells: new Map(), runs: new Map() };
  if (!last && prior.size === 0 && priorRuns.size === 0) return { doc, unchanged, held: none };
  // A held cell this batch replaces is not written: the new cell supersedes it.
  const replacedKeys = new Set(planned.filter((p) => !p.same).map((p) => p.key));
  const reported = confirmApart === 'heartbeat' ? heartbeatFacts(facts, knownFacts) : null;
  const quiet = priorRuns.size === 0 && open.length === 0 && planned.every((p) => p.same);
  // (writing facts also declares the `requests` map where it is missing: not a heartbeat's op)
  if (reported && quiet && (doc.requests || !facts)) {
    // a quiet round: the change a v2 push may carry as its heartbeat (decision 500)
    const cells = new Map(prior);
    for (const p of planned) cells.set(p.key, p.cell);
    const next = heartbeatRound(doc, cells, (key) => readPackedCell(doc, key), reported.facts);
    if (next) return { doc: next, unchanged, held: none };
  }
  // A round with news: its unchanged cells go as the heartbeat change after the round's change (decision
  // 500), when there are enough of them to pay for a second change.
  const split =
    confirmApart === 'heartbeat' && open.length === 0 && doc.confirmed && (doc.requests || !facts)
      ? heartbeatCells(doc, prior, planned, replacedKeys, (key) => readPackedCell(doc, key))
      : new Map<string, number>();
  const later = split.size >= MIN_HEARTBEAT_CELLS ? split : new Map<string, number>();
  const apart = confirmApart !== false;
  const at = last?.recordedAt ?? heldBefore.at ?? 0;
  // No message: the run ids it named (`run <runId>`) are in the entries, nobody reads it, and its ~12 B
  // of entropy after brotli were a fifth of what each change costs on the wire (decision 370).
  const next = A.change(doc, { time: Math.floor(at / 1000) }, (d) => {
    for (const [runId, run] of priorRuns) d.runs[runId] = packDocEntry(run);
    // The packed cell under each key (what a confirmed entry is written over).
    const bases = new Map<string, DocCell | undefined>();
    const base = (key: string) => (bases.has(key) ? bases.get(key) : readPackedCell(doc, key));
    for (const [key, cell] of prior)
      if (!replacedKeys.has(key) && !later.has(key))
        bases.set(key, writeCell(d, key, base(key), cell, apart, packDocEntry));
    for (const p of planned) {
      if (later.has(p.key)) continue;
      if (!p.same) d.runs[p.input.runId] = packDocEntry(docRun(p.input));
      bases.set(p.key, writeCell(d, p.key, base(p.key), p.cell, apart && p.same, packDocEntry));
      if (open.length > 0) stampRequests(d, open, planDone(p));
    }
    if (facts) writeFacts(d, facts, knownFacts ?? undefined);
  });
  if (later.size === 0) return { doc: next, unchanged, held: none };
  // checked against the rule on `doc` (heartbeatCells), and the round's change wrote none of these cells,
  // their entries nor a request: the rule writes them on `next` as it would have on `doc`
  const after = withHeartbeat(next, later);
  if (!after) throw new Error('recordRuns: a document with a `confirmed` map made no heartbeat change');
  return { doc: after, unchanged, held: none };
}

/** Fewest unchanged cells worth a heartbeat change of their own after a round's change (~100 B a change). */
const MIN_HEARTBEAT_CELLS = 8;

/**
 * How unchanged re-plans are written: rewriting their cells (`false`), apart in `confirmed` (`true`,
 * decision 330), or apart as the round's heartbeat change where the round is only that (`'heartbeat'`,
 * decision 500).
 */
export type ConfirmMode = boolean | 'heartbeat';

/** The facts a heartbeat change writes besides its cells (the queue and report time, as every round). */
const HEARTBEAT_FACTS = new Set(['queueDepth', 'oldestUnsentAt', 'reportedAt']);

/**
 * What writing `facts` over `known` writes, when a heartbeat change can say it: nothing (`facts`
 * undefined), or only the queue's depth, its oldest unsent result and the report time. Null: other facts
 * change, or the document's facts are not known.
 */
function heartbeatFacts(
  facts: AgentFacts | undefined,
  known: Record<string, unknown> | null | undefined,
): { facts?: HeartbeatFacts } | null {
  if (!facts) return {};
  if (!known) return null;
  for (const [k, v] of Object.entries(facts))
    if (!HEARTBEAT_FACTS.has(k) && !(v === undefined ? !(k in known) : same(known[k], v))) return null;
  const { queueDepth, oldestUnsentAt, reportedAt } = facts as Record<string, unknown>;
  const uint = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!uint(queueDepth) || !uint(reportedAt) || !(oldestUnsentAt === undefined || uint(oldestUnsentAt)))
    return null;
  return { facts: { queueDepth, reportedAt, ...(oldestUnsentAt === undefined ? {} : { oldestUnsentAt }) } };
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

/**
 * Writes that a plan starting now will answer the open requests of its cell (`requests[id].startedAt`,
 * docs/decisions/560-plan-request-states.md): the agent's signed word the hub shows as `running`. Null
 * when no request waits for this plan (no change is made).
 */
export function writeRequestStarts(
  doc: AgentAutomergeDoc,
  plan: PlanStart,
): { doc: AgentAutomergeDoc; requestIds: string[] } | null {
  const open = openRequests(doc.requests).filter((r) => r.startedAt === undefined);
  if (open.length === 0) return null;
  let requestIds: string[] = [];
  const next = A.change(doc, { time: Math.floor(plan.startedAt / 1000) }, (d) => {
    requestIds = stampStarts(d, open, plan);
  });
  return requestIds.length > 0 ? { doc: next, requestIds } : null;
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
