import type { AgentFacts } from '@driftline/protocol';
import type { AgentWriteSet, BlobRow, RunRow } from '../../ports/AgentStorage.js';
import type { RecordRunInput, StoredDetail } from '../../ports/Ledger.js';
import {
  type AgentAutomergeDoc,
  type ConfirmMode,
  type HeldAfter,
  type HeldCells,
  mergeFacts,
  recordRuns,
} from '../doc/agentDoc.js';

/**
 * Recording runs that finished together (step 4 of docs/architecture.md#the-trip): one Automerge change and one write set for
 * all of them. An unchanged plan is recorded as a confirmation of its cell, without a run entry in the
 * document and without storing its detail again.
 */

/** Queue bytes a run adds besides its detail (its row and index entries), for the bound's estimate. */
const RUN_ROW_BYTES = 512;

export interface RecordedBatch {
  doc: AgentAutomergeDoc;
  facts: Record<string, unknown> | null;
  unchanged: boolean[];
  /** Estimated queue bytes added. */
  added: number;
  /** Results held out of the document after it (empty when the batch was written). */
  held: HeldAfter;
  /** The batch's facts when they were held (more results coming): written with the next write. */
  heldFacts?: AgentFacts;
}

/**
 * Changes `before` with the batch and adds its run and blob rows to `w`. `depth` is the unacknowledged
 * queue before it (what the facts report as queue depth and oldest unsent result).
 */
export function recordBatch(
  w: AgentWriteSet,
  before: AgentAutomergeDoc,
  knownFacts: Record<string, unknown> | null,
  inputs: readonly RecordRunInput[],
  epoch: number,
  depth: { count: number; oldest: number | null },
  now: number,
  confirmApart: ConfirmMode = false,
  held?: HeldCells,
): RecordedBatch {
  const last = inputs.at(-1) as RecordRunInput;
  const firstFinished = Math.min(...inputs.map((i) => Date.parse(i.summary.finishedAt)));
  const facts = last.facts
    ? {
        ...last.facts,
        queueDepth: depth.count + inputs.length,
        oldestUnsentAt: Math.min(depth.oldest ?? firstFinished, firstFinished),
        reportedAt: now,
      }
    : undefined;
  // While more results are coming the facts (queue depth, report time) wait for the round's last write:
  // rewritten by every change they cost ~9 B each on the wire for news nobody needs mid-round.
  const holdFacts = held?.hold === true;
  const r = recordRuns(
    before,
    inputs.map((input) => ({
      runId: input.runId,
      summary: input.summary,
      // Read only for a run that is stored (an unchanged plan's detail is never packed).
      get detailBlob() {
        return input.detail ? storedDetail(input).sha256 : undefined;
      },
      recordedAt: now,
      lockedStreak: input.lockedStreak,
      cellRef: input.cellRef,
      mayConfirm: input.mayConfirm,
    })),
    holdFacts ? undefined : facts,
    knownFacts,
    confirmApart,
    held,
  );
  const written = r.doc !== before;
  const runs: RunRow[] = [];
  const blobs: BlobRow[] = [];
  let added = 0;
  for (const [i, input] of inputs.entries()) {
    const same = r.unchanged[i] === true;
    // An unchanged plan's detail is never stored: it is packed only when it will be.
    const detail = input.detail && !same ? storedDetail(input) : undefined;
    runs.push({
      runId: input.runId,
      epoch,
      environment: input.summary.environment,
      component: input.summary.component,
      cellRef: input.cellRef ?? null,
      status: input.summary.status,
      planHash: input.summary.planHash ?? null,
      finishedAt: Date.parse(input.summary.finishedAt),
      recordedAt: now,
      unchanged: same,
      detailBlob: detail?.sha256 ?? null,
      ackedAt: null,
    });
    if (detail)
      blobs.push({
        sha256: detail.sha256,
        size: detail.bytes.length,
        contentType: detail.contentType,
        data: detail.bytes,
        runId: input.runId,
        status: input.summary.status,
        createdAt: now,
        announcedAt: null,
        uploadedAt: null,
        uploadUpstream: null,
        ackedAt: null,
        droppedAt: null,
      });
    added += (detail ? detail.bytes.length : 0) + RUN_ROW_BYTES;
  }
  w.runs = [...(w.runs ?? []), ...runs];
  w.blobs = [...(w.blobs ?? []), ...blobs];
  return {
    doc: r.doc,
    facts: facts && written && !holdFacts ? mergeFacts(knownFacts, facts) : knownFacts,
    unchanged: r.unchanged,
    added,
    held: r.held,
    ...(facts && (!written || holdFacts) ? { heldFacts: facts } : {}),
  };
}

const packed = new WeakMap<RecordRunInput, StoredDetail>();

/** The input's detail, packed once if it was given as a function (see `RecordRunInput.detail`). */
function storedDetail(input: RecordRunInput): StoredDetail {
  const d = input.detail;
  if (!d) throw new Error('storedDetail called for a run without detail');
  if (typeof d !== 'function') return d;
  let p = packed.get(input);
  if (!p) {
    p = d();
    packed.set(input, p);
  }
  return p;
}
