import * as A from '@automerge/automerge';
import { docId, FAILURE_STATUSES } from '@driftline/protocol';
import type {
  BlobStorage,
  EpochRow,
  EpochStorage,
  RunStorage,
  SyncStorage,
} from '../../ports/AgentStorage.js';
import type { PendingDelta } from '../../ports/Ledger.js';
import { type CustodyOptions, overdueCustody } from './custody.js';
import type { EpochDocs } from './EpochDocs.js';
import { sameHeads } from './epochs.js';
import { sinceHeads } from './resend.js';

/**
 * What the next push carries, per unpruned epoch: `saveSince` the heads resend.ts picks, and the blobs
 * not announced yet (or announced `resendAfterMs` ago, uploaded, and still not acknowledged). A delta holding a failure goes up at `failure` priority.
 */

/** Results whose delta is pushed first (a relay forwards by priority): a failure is news (protocol's list). */
export { FAILURE_STATUSES };

export interface PendingContext {
  storage: EpochStorage & RunStorage & BlobStorage & SyncStorage;
  docs: EpochDocs;
  site: string;
  agent: string;
  now: number;
  resendAfterMs: number;
  /** Custody deadlines (custody.ts); unset: a receipt counts for `resendAfterMs`, as before them. */
  custody?: CustodyOptions;
  /** Runs held out of the document (decision 395): their detail blobs are not announced before them. */
  heldRuns?: ReadonlyMap<string, unknown>;
}

export function pendingDeltas(c: PendingContext): PendingDelta[] {
  const out: PendingDelta[] = [];
  for (const e of c.storage.epochs('unpruned')) {
    // A receipt held past its upstream's deadline: everything since the hub's ack goes again (custody.ts).
    const overdue = c.custody ? overdueCustody(c.storage, e, c.now, c.custody) : null;
    const since = sinceHeads(e, c.now, c.resendAfterMs, overdue !== null);
    const delta = c.docs.with(e.epoch, (doc) => {
      const heads = A.getHeads(doc);
      return { heads, changes: sameHeads(since, heads) ? new Uint8Array(0) : A.saveSince(doc, since) };
    });
    const held = c.heldRuns;
    // Announced with a receipt that grew stale and still not acknowledged: announced again, so a hub that
    // holds the blob but never saw its announcement (a relay that faked the receipt) acks it (decision 412).
    const all = c.storage.unannouncedBlobs(e.epoch, overdue ? c.now : c.now - c.resendAfterMs);
    const blobs = held?.size ? all.filter((b) => !b.runId || !held.has(b.runId)) : all;
    if (delta.changes.length === 0 && blobs.length === 0) continue;
    out.push({
      epoch: e.epoch,
      docId: docId(c.site, c.agent, e.epoch),
      changes: delta.changes,
      heads: delta.heads,
      sealed: e.sealedAt !== null,
      blobs: blobs.map((b) => ({
        sha256: b.sha256 as never,
        size: b.size,
        contentType: b.contentType,
        runId: b.runId as never,
      })),
      hasFailure: c.storage.hasUnackedRun(e.epoch, FAILURE_STATUSES),
      fromAck: sameHeads(since, e.ackedHeads),
      ...(overdue ? { overdue: { by: overdue.by, at: overdue.at, deadlineMs: overdue.deadlineMs } } : {}),
    });
  }
  return out;
}

/**
 * Bytes of changes the next pushes would carry, for `status`. A sealed epoch never changes, so its count
 * is kept per `since` heads: status does not load every sealed epoch again (weeks offline leave hundreds).
 */
export class PendingBytes {
  private readonly sealed = new Map<number, { since: string; bytes: number }>();

  total(c: PendingContext): number {
    let total = 0;
    for (const e of c.storage.epochs('unpruned')) total += this.ofEpoch(c, e);
    return total;
  }

  private ofEpoch(c: PendingContext, e: EpochRow): number {
    const overdue = c.custody ? overdueCustody(c.storage, e, c.now, c.custody) !== null : false;
    const since = sinceHeads(e, c.now, c.resendAfterMs, overdue);
    const key = since.join();
    const cached = e.sealedAt !== null ? this.sealed.get(e.epoch) : undefined;
    if (cached?.since === key) return cached.bytes;
    const bytes = c.docs.with(e.epoch, (doc) =>
      sameHeads(since, A.getHeads(doc)) ? 0 : A.saveSince(doc, since).length,
    );
    if (e.sealedAt !== null) this.sealed.set(e.epoch, { since: key, bytes });
    return bytes;
  }

  /** An epoch was pruned: nothing of it is pending any more. */
  forget(epoch: number): void {
    this.sealed.delete(epoch);
  }

  /** Every epoch's `since` heads went back to the hub's ack (a rejection). */
  clear(): void {
    this.sealed.clear();
  }
}
