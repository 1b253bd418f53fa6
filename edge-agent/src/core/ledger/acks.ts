import * as A from '@automerge/automerge';
import { type AckPayload, cellKey, parseDocId } from '@driftline/protocol';
import type {
  AgentWriteSet,
  BlobStorage,
  EpochRow,
  EpochStorage,
  RunRow,
  RunStorage,
  SyncStorage,
} from '../../ports/AgentStorage.js';
import type { AckResult } from '../../ports/Ledger.js';
import { type AgentAutomergeDoc, readCell } from '../doc/agentDoc.js';
import { custodyAckWrites } from './custody.js';
import type { EpochDocs } from './EpochDocs.js';
import { sameHeads } from './epochs.js';
import { ackOutdates } from './resend.js';

/**
 * The hub's end-to-end ack (D4): the only thing that marks runs acknowledged and prunes. A relay's
 * receipt never does (see resend.ts). What the hub holds is read from the document itself, as it was
 * at the acked heads (`Automerge.view`).
 */

/** Whether the hub's document at the acked heads holds the run. */
export function heldAtHub(view: AgentAutomergeDoc, r: RunRow): boolean {
  if (!r.unchanged) return view.runs?.[r.runId] !== undefined;
  // A confirmation is not a run of the document: the cell shows it once its plannedAt reached the run's.
  return (readCell(view, cellKey(r.environment, r.component, r.cellRef))?.plannedAt ?? 0) >= r.finishedAt;
}

/**
 * Whether `heads` are older than the epoch's acked heads (each one of them or before them): the ack of a
 * push that reached the hub late, by a slow path, after a later push's ack (hop v2 acks name the push,
 * docs/decisions/575-custody-deadline-per-path.md). It acknowledges nothing new, and taking it would move
 * the acked heads back and the next push would carry again what a relay's receipt covers.
 */
function olderThanAcked(doc: AgentAutomergeDoc, row: EpochRow, heads: readonly string[]): boolean {
  if (row.ackedHeads.length === 0 || sameHeads(heads, row.ackedHeads) || !A.hasHeads(doc, row.ackedHeads))
    return false;
  const after = new Set(A.getChangesMetaSince(doc, row.ackedHeads).map((c) => c.hash));
  return heads.every((h) => !after.has(h));
}

/**
 * Adds to `w` what an ack of epoch `row` (whose document is `doc`) changes: runs the hub holds marked
 * acknowledged, the epoch's acked heads, and when a sealed epoch is held whole by the hub, its pruning
 * (chunks and acknowledged runs deleted locally). Heads this agent never wrote are ignored: never prune
 * on a guess.
 */
export function ackEpoch(
  w: AgentWriteSet,
  row: EpochRow,
  doc: AgentAutomergeDoc,
  unacked: readonly RunRow[],
  ack: AckPayload,
  now: number,
  result: AckResult,
): void {
  if (!A.hasHeads(doc, ack.heads)) return;
  if (olderThanAcked(doc, row, ack.heads)) return;
  const view = A.view(doc, ack.heads);
  const atHub = unacked.filter((r) => heldAtHub(view, r));
  w.runAcks = [...(w.runAcks ?? []), ...atHub.map((r) => ({ runId: r.runId, ackedAt: now }))];
  result.runsAcked += atHub.length;
  const acked: EpochRow = { ...row, ackedHeads: [...ack.heads], ackedAt: now };
  if (row.sealedAt !== null && sameHeads(ack.heads, A.getHeads(doc))) {
    w.chunkResets = [...(w.chunkResets ?? []), row.epoch];
    w.ackedRunsDeleted = [...(w.ackedRunsDeleted ?? []), row.epoch];
    w.epochs = [...(w.epochs ?? []), { ...acked, prunedAt: now, bytes: 0 }];
    result.epochsPruned.push(row.epoch);
  } else {
    w.epochs = [...(w.epochs ?? []), acked];
  }
}

/**
 * The writes for a hub ack and what it did: blobs it names freed (whoever's document it is), rejections
 * it outdates, and for an epoch of this agent still held, `ackEpoch`. An ack of an epoch pruned already
 * or not this agent's changes no run.
 */
export function ackWrites(
  storage: EpochStorage & RunStorage & BlobStorage & SyncStorage,
  docs: EpochDocs,
  ack: AckPayload,
  ids: { site: string; agent: string },
  now: number,
): { w: AgentWriteSet; result: AckResult } {
  const parsed = parseDocId(ack.doc);
  const ours = !!parsed && parsed.site === ids.site && parsed.agent === ids.agent;
  const result: AckResult = {
    runsAcked: 0,
    epochsPruned: [],
    blobsDeleted: 0,
    unknownEpoch: false,
    rejectionsCleared: 0,
  };
  const w: AgentWriteSet = { blobUpdates: [] };
  for (const sha256 of new Set(ack.blobs)) {
    const b = storage.blob(sha256);
    if (!b || b.ackedAt !== null) continue;
    w.blobUpdates?.push({ sha256, data: null, ackedAt: now });
    result.blobsDeleted++;
  }
  if (ours) result.rejectionsCleared = ackOutdates(storage, w, ack.committedAt);
  const row = ours && parsed ? storage.epoch(parsed.epoch) : undefined;
  if (!row || row.prunedAt !== null) result.unknownEpoch = !row;
  else
    docs.with(row.epoch, (doc) => {
      ackEpoch(w, row, doc, storage.unackedRuns(row.epoch), ack, now, result);
      if (A.hasHeads(doc, ack.heads)) custodyAckWrites(w, storage, row.epoch, doc, ack.heads, now);
    });
  return { w, result };
}
