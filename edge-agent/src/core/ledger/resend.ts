import type { RejectionPayload } from '@driftline/protocol';
import type {
  AgentWriteSet,
  BlobStorage,
  EpochRow,
  EpochStorage,
  RejectionRow,
  RunStorage,
  SyncStorage,
} from '../../ports/AgentStorage.js';
import type { AgentRejection, Ledger } from '../../ports/Ledger.js';
import { type CustodyOptions, custodyReceiptWrites } from './custody.js';
import { upstreamResult } from './upstreams.js';

/**
 * What goes up again. A relay has custody of what it receipted, so a push carries only what came after
 * the last receipt; after `resendAfterMs` (a relay that lost it anyway), or once a hub rejection asked
 * for it, everything after the hub's ack goes up again. Only the hub's ack moves that floor (D4).
 */

/** The meta key holding the hub time of the newest ack: a rejection older than it is outdated. */
export const HUB_ACK_AT = 'hub_ack_at';

/** The heads a push of this epoch starts from: the last fresh relay receipt's, else the hub's ack. */
export function sinceHeads(e: EpochRow, now: number, resendAfterMs: number, overdue = false): string[] {
  const receiptFresh =
    !overdue &&
    e.receiptedAt !== null &&
    now - e.receiptedAt < resendAfterMs &&
    (e.ackedAt ?? 0) <= e.receiptedAt;
  return receiptFresh ? e.receiptedHeads : e.ackedHeads;
}

/** A receipt that counts as custody: the upstream stored the bundle (or held it already). */
export const isCustody = (receipt: string | null) => receipt === 'stored' || receipt === 'duplicate';

/**
 * Whether a receipt for a bundle of `e` built at `sentAt` counts. One for a bundle built before the
 * latest rejection does not: the rejection asked for its changes again, and the relay's custody of them
 * ends at a hub that refused them.
 */
export function receiptCounts(e: EpochRow | undefined, receipt: string | null, sentAt: number): boolean {
  return !!e && isCustody(receipt) && (e.rejectedAt === null || e.rejectedAt < sentAt);
}

/**
 * The writes recording a hub rejection, or null when a hub ack committed after it arrived already.
 * One row per code, the newest replacing the one before. Every unpruned epoch forgets its relay receipt,
 * and blobs their announcement, so the next push carries everything since the hub's ack again: the
 * relay that receipted them handed them to a hub that refused them, and nothing else will send them.
 */
export function rejectionWrites(
  storage: SyncStorage & EpochStorage & BlobStorage,
  r: RejectionPayload,
  now: number,
): AgentWriteSet | null {
  const ackAt = storage.meta(HUB_ACK_AT);
  if (ackAt !== undefined && r.lastAt <= Number(ackAt)) return null;
  // the same refusal again (a relay repeats its notice with each downlink page): already recorded
  const had = storage.rejections().find((x) => x.code === r.code);
  if (had && had.lastAt === r.lastAt && had.count === r.count) return null;
  return {
    rejections: [
      {
        code: r.code,
        bundleIds: [...r.bundleIds],
        count: r.count,
        firstAt: r.firstAt,
        lastAt: r.lastAt,
        receivedAt: now,
      },
    ],
    epochs: storage
      .epochs('unpruned')
      .map((e) => ({ ...e, receiptedHeads: e.ackedHeads, receiptedAt: null, rejectedAt: now })),
    blobUpdates: storage.announcedBlobs().map((b) => ({ sha256: b.sha256, announcedAt: null })),
  };
}

/**
 * A hub ack committed at `committedAt` (hub clock): rejections up to then are outdated. Adds their
 * deletion and the newest ack time to `w`; returns how many rejections it outdates.
 */
export function ackOutdates(
  storage: SyncStorage & EpochStorage & BlobStorage,
  w: AgentWriteSet,
  committedAt: number,
): number {
  const known = Number(storage.meta(HUB_ACK_AT) ?? Number.NEGATIVE_INFINITY);
  w.meta = { ...w.meta, [HUB_ACK_AT]: String(Math.max(known, committedAt)) };
  const outdated = storage.rejections().filter((r) => r.lastAt <= committedAt);
  w.rejectionDeletes = [...(w.rejectionDeletes ?? []), ...outdated.map((r) => r.code)];
  return outdated.length;
}

/** A stored rejection as `status` and the sync engine see it; retried `retryMs` after it arrived. */
export function agentRejection(r: RejectionRow, retryMs: number): AgentRejection {
  return {
    state: r.code === 'unknown-agent' ? 'waiting for enrolment' : 'rejected',
    code: r.code,
    count: r.count,
    bundleIds: r.bundleIds,
    rejectedAt: r.lastAt,
    receivedAt: r.receivedAt,
    retryAt: r.receivedAt + retryMs,
  };
}

/** A push as the sync engine reports it (`Ledger.recordPush`). */
export type PushRecord = Parameters<Ledger['recordPush']>[0];

/**
 * The writes recording a push: the push row, the epoch's receipted heads and its blobs announced when
 * the receipt counts (custody), and the upstream's health (no receipt at all is a failure).
 */
export function pushWrites(
  storage: SyncStorage & EpochStorage & BlobStorage & RunStorage,
  p: PushRecord,
  now: number,
  custody?: CustodyOptions,
): AgentWriteSet {
  const w: AgentWriteSet = {
    pushes: [
      {
        bundleId: p.bundleId,
        epoch: p.epoch,
        heads: p.heads,
        bytes: p.bytes,
        createdAt: now,
        upstream: p.upstream,
        receipt: p.receipt,
        receiptAt: p.receipt ? now : null,
      },
    ],
  };
  const e = storage.epoch(p.epoch);
  if (e && receiptCounts(e, p.receipt, p.sentAt ?? now)) {
    w.epochs = [{ ...e, receiptedHeads: p.heads, receiptedAt: now }];
    w.blobUpdates = p.blobs.map((sha256) => ({ sha256, announcedAt: now }));
    if (custody)
      custodyReceiptWrites(
        w,
        storage,
        { epoch: p.epoch, heads: p.heads, by: p.upstream, fromAck: p.fromAck === true },
        now,
        custody,
      );
  }
  upstreamResult(w, storage.upstream(p.upstream), p.upstream, p.receipt ? null : 'no receipt', now);
  return w;
}
