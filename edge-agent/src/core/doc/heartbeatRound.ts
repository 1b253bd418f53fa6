import * as A from '@automerge/automerge';
import {
  confirmedAfter,
  encodeHeartbeatOf,
  type HeartbeatBackend,
  type HeartbeatFacts,
  heartbeatActor,
  heartbeatCellKeys,
  heartbeatChange,
} from '@driftline/hop/heartbeat';
import { automergeChunks, type DocCell, docId as docIdFor, type wire2 } from '@driftline/protocol';
import { confirmedEntry } from './confirmApart.js';
import type { AgentAutomergeDoc } from './storedDoc.js';

/**
 * A quiet round written as its heartbeat change (docs/decisions/500-heartbeat-rebuilds-the-change.md): the
 * round's confirmations as the one change both ends make by the same rule (`@driftline/hop/heartbeat`), so
 * a v2 push can carry the heartbeat instead of the change. Null when the round is not exactly that: a cell
 * whose entry the rule would not write (its plan's commit moved, a cell rewritten), or no `confirmed` map.
 */
export function heartbeatRound(
  doc: AgentAutomergeDoc,
  cells: ReadonlyMap<string, DocCell>,
  base: (key: string) => DocCell | undefined,
  facts?: HeartbeatFacts,
): AgentAutomergeDoc | null {
  if (cells.size === 0 || !doc.confirmed) return null;
  const named = new Map<string, number>();
  for (const [key, cell] of cells) {
    const at = ruleWrites(doc, key, cell, base(key));
    if (at === null) return null;
    named.set(key, at);
  }
  return withHeartbeat(doc, named, facts);
}

/**
 * `doc` after the heartbeat change naming `named` (each cell's time, checked against the rule by the
 * caller: `heartbeatRound`, `heartbeatCells`); null when it has no `confirmed` map (nor `facts` for `facts`).
 */
export function withHeartbeat(
  doc: AgentAutomergeDoc,
  named: ReadonlyMap<string, number>,
  facts?: HeartbeatFacts,
): AgentAutomergeDoc | null {
  const cells = [...named].map(([key, at]) => ({ key, at }));
  const made = heartbeatChange(backend(doc), docIdOf(doc), cells, facts);
  if (!made) return null;
  const [next] = A.applyChanges(doc, [made.bytes]);
  return next;
}

/**
 * When the rule writes `cell` over its packed `base` exactly as decision 330 would (a confirmation of the
 * base's run whose commit did not move): the entry's time; else null.
 */
function ruleWrites(
  doc: AgentAutomergeDoc,
  key: string,
  cell: DocCell,
  base: DocCell | undefined,
): number | null {
  const entry = confirmedEntry(base, cell);
  if (!entry) return null;
  const prev = doc.confirmed?.[key];
  const rule = confirmedAfter(prev === undefined ? undefined : String(prev), entry.at);
  return JSON.stringify(entry) === rule ? entry.at : null;
}

/**
 * The cells of a round that the heartbeat change can write after the round's own change (decision 500),
 * each with its entry's time: each one's last plan in this batch confirms its packed cell as the rule
 * writes it. `prior`: held cells, `planned`: this batch's (later ones win), `replaced`: keys a changed plan
 * rewrites.
 */
export function heartbeatCells(
  doc: AgentAutomergeDoc,
  prior: ReadonlyMap<string, DocCell>,
  planned: readonly { key: string; cell: DocCell; same: boolean }[],
  replaced: ReadonlySet<string>,
  base: (key: string) => DocCell | undefined,
): Map<string, number> {
  const last = new Map<string, DocCell | null>();
  for (const [key, cell] of prior) if (!replaced.has(key)) last.set(key, cell);
  for (const p of planned) last.set(p.key, p.same ? p.cell : null);
  const out = new Map<string, number>();
  for (const [key, cell] of last) {
    const at = cell ? ruleWrites(doc, key, cell, base(key)) : null;
    if (at !== null) out.set(key, at);
  }
  return out;
}

/** What a v2 push carries for a delta: its changes before the last, and the heartbeat standing for it. */
export interface HeartbeatForm {
  changes: Uint8Array;
  heartbeat: wire2.HeartbeatBody;
}

/**
 * The delta `changes` of `doc` as a v2 push carries it when its last change is a heartbeat change: the
 * changes before it and the heartbeat (which cells, when, and the change's hash). Null: send it all.
 */
export function heartbeatForm(doc: AgentAutomergeDoc, changes: Uint8Array): HeartbeatForm | null {
  const split = splitLastChunk(changes);
  const heartbeat = split ? heartbeatOf(doc, split.last) : null;
  return split && heartbeat ? { changes: split.rest, heartbeat } : null;
}

/**
 * The heartbeat standing for the change `last` of `doc` (which cells, when, and the change's hash); null
 * when it is not a heartbeat change. It reads the document only at the change's own parents and hash, so
 * the answer for one change never changes.
 */
export function heartbeatOf(doc: AgentAutomergeDoc, last: Uint8Array): wire2.HeartbeatBody | null {
  const id = docIdOf(doc);
  let change: A.DecodedChange;
  try {
    change = A.decodeChange(last);
  } catch {
    return null;
  }
  if (change.actor !== heartbeatActor(id) || !change.hash) return null;
  const h = backend(doc);
  const confirmedObj = h.get('_root', 'confirmed', change.deps);
  const factsObj = h.get('_root', 'facts', change.deps);
  const cells = [];
  let factsWritten = false;
  for (const op of change.ops) {
    if (op.obj === confirmedObj && op.action === 'set' && typeof op.value === 'string') {
      const at = (JSON.parse(op.value) as { at?: unknown }).at;
      if (typeof at !== 'number') return null;
      cells.push({ key: op.key, at });
    } else if (op.obj === factsObj && FACT_KEYS.has(op.key)) factsWritten = true;
    else return null;
  }
  // Automerge leaves out a put of the value already there: the facts are read as the change left them
  const fact = (key: string) => {
    const v = typeof factsObj === 'string' ? h.get(factsObj, key, [change.hash as string]) : undefined;
    return typeof v === 'number' ? v : undefined;
  };
  const [queueDepth, reportedAt, oldestUnsentAt] = [
    fact('queueDepth'),
    fact('reportedAt'),
    fact('oldestUnsentAt'),
  ];
  if (factsWritten && (queueDepth === undefined || reportedAt === undefined)) return null;
  const keys = heartbeatCellKeys(h, change.deps);
  return encodeHeartbeatOf(
    keys,
    cells,
    change.hash,
    factsWritten && queueDepth !== undefined && reportedAt !== undefined
      ? { queueDepth, reportedAt, ...(oldestUnsentAt === undefined ? {} : { oldestUnsentAt }) }
      : undefined,
  );
}

const FACT_KEYS = new Set(['queueDepth', 'oldestUnsentAt', 'reportedAt']);
const docIdOf = (doc: AgentAutomergeDoc) => docIdFor(String(doc.site), String(doc.agent), doc.epoch);
const backend = (doc: AgentAutomergeDoc) => A.getBackend(doc) as unknown as HeartbeatBackend;

/** The last of Automerge's chunks in `bytes` and the bytes before it; null when `bytes` is not whole chunks. */
export function splitLastChunk(bytes: Uint8Array): { rest: Uint8Array; last: Uint8Array } | null {
  const { chunks, broken } = automergeChunks(bytes);
  const last = chunks.at(-1);
  if (broken || !last) return null;
  return { rest: bytes.subarray(0, last.start), last: bytes.subarray(last.start) };
}
