import * as A from '@automerge/automerge';
import type { AgentWriteSet, EpochRow } from '../../ports/AgentStorage.js';
import { type AgentAutomergeDoc, latestCells, newEpochDoc, sealEpoch } from '../doc/agentDoc.js';

/**
 * Epochs (C1 in docs/architecture.md#invariants): the document is cut into epochs so loading and merging cost do not grow with the
 * deployment's age. These functions decide when an epoch is sealed or compacted and say what to write;
 * the ledger commits it.
 */

/** When an epoch is sealed or compacted (`sync.maxDocBytes`, `sync.maxDocChanges`). */
export interface EpochLimits {
  /** Seal once the stored document passes this many bytes. */
  maxDocBytes: number;
  /** Seal once this many entries (runs and fact updates) were recorded in it: load cost follows changes. */
  maxDocChanges: number;
  /** Rewrite the epoch's chunks as one snapshot after this many (a snapshot loads fast). */
  compactAfterChunks: number;
}

/** A new epoch's row and its first chunk (a whole `save()`: loading starts from it). */
export function startEpoch(
  epoch: number,
  doc: AgentAutomergeDoc,
  now: number,
): Required<Pick<AgentWriteSet, 'epochs' | 'chunks'>> & { row: EpochRow } {
  const snapshot = A.save(doc);
  const row: EpochRow = {
    epoch,
    createdAt: now,
    sealedAt: null,
    ackedHeads: [],
    ackedAt: null,
    receiptedHeads: [],
    receiptedAt: null,
    rejectedAt: null,
    prunedAt: null,
    bytes: snapshot.length,
    changes: 0,
  };
  return { row, epochs: [row], chunks: [{ epoch, data: snapshot }] };
}

/**
 * The chunk holding the change from `before` to `after` and the epoch row counting it (`entries`
 * recorded entries); null when nothing changed.
 */
export function appendChange(
  row: EpochRow,
  before: AgentAutomergeDoc,
  after: AgentAutomergeDoc,
  entries: number,
): { chunk: Uint8Array; row: EpochRow } | null {
  const chunk = A.saveSince(after, A.getHeads(before));
  if (chunk.length === 0) return null;
  return { chunk, row: { ...row, bytes: row.bytes + chunk.length, changes: row.changes + entries } };
}

/** Replaces an epoch's chunks by one snapshot of `doc`. */
export function compact(w: AgentWriteSet, row: EpochRow, doc: AgentAutomergeDoc): EpochRow {
  const snapshot = A.save(doc);
  w.chunkResets = [...(w.chunkResets ?? []), row.epoch];
  // The reset deletes every chunk of the epoch, those of this write set included.
  w.chunks = [...(w.chunks ?? []).filter((c) => c.epoch !== row.epoch), { epoch: row.epoch, data: snapshot }];
  return { ...row, bytes: snapshot.length };
}

export type EpochStep =
  | { kind: 'keep'; row: EpochRow }
  | { kind: 'compacted'; row: EpochRow }
  | {
      kind: 'sealed';
      /** The sealed epoch's last state (free it once committed). */
      sealedDoc: AgentAutomergeDoc;
      next: { epoch: number; doc: AgentAutomergeDoc; row: EpochRow };
    };

/**
 * After a change was appended to the current epoch (`row` counts it, `chunks` chunks stored): seals it
 * past a limit, writing it as one snapshot and starting the next epoch seeded with the latest result of
 * every cell; else compacts it past `compactAfterChunks`. Adds the writes to `w`.
 */
export function sealOrCompact(
  w: AgentWriteSet,
  row: EpochRow,
  chunks: number,
  doc: AgentAutomergeDoc,
  limits: EpochLimits,
  ids: { site: string; agent: string },
  now: number,
): EpochStep {
  if (row.bytes > limits.maxDocBytes || row.changes >= limits.maxDocChanges) {
    const sealedDoc = sealEpoch(doc, now);
    const sealedRow = { ...compact(w, row, sealedDoc), sealedAt: now };
    const epoch = row.epoch + 1;
    const nextDoc = newEpochDoc(ids.site, ids.agent, epoch, latestCells(sealedDoc));
    const start = startEpoch(epoch, nextDoc, now);
    w.epochs = [...(w.epochs ?? []).filter((e) => e.epoch !== row.epoch), sealedRow, ...start.epochs];
    w.chunks = [...(w.chunks ?? []), ...start.chunks];
    return { kind: 'sealed', sealedDoc, next: { epoch, doc: nextDoc, row: start.row } };
  }
  if (chunks > limits.compactAfterChunks) {
    const compacted = compact(w, row, doc);
    w.epochs = [...(w.epochs ?? []).filter((e) => e.epoch !== row.epoch), compacted];
    return { kind: 'compacted', row: compacted };
  }
  return { kind: 'keep', row };
}

/** Two head lists name the same document state. */
export function sameHeads(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((h) => b.includes(h));
}
