import type { BlobStorage, EpochStorage, RunStorage, SyncStorage } from '../../ports/AgentStorage.js';
import type { AgentRejection, SatRecord, StoreStatus } from '../../ports/Ledger.js';
import { REUPLOADS } from './blobQueue.js';
import { DROPPED_BLOBS } from './queueBound.js';
import { isCustody } from './resend.js';
import { lastStallOf, STALLS, stallsOf } from './upstreams.js';

/** `edge-agent status` from the storage's rows and what the ledger knows besides. */
export function readStatus(
  storage: EpochStorage & RunStorage & BlobStorage & SyncStorage,
  base: {
    site: string;
    agent: string;
    epoch: number;
    maxQueueBytes: number;
    queueBytes: number;
    /** Bytes of document changes the hub has not acknowledged (what the next pushes carry). */
    pendingChangeBytes: number;
    held: StoreStatus['held'];
    rejections: AgentRejection[];
    custodyOverdue: SatRecord[];
  },
): StoreStatus {
  const epochs = storage.epochs('all');
  const blobs = storage.blobTotals(true);
  const push = storage.lastPush();
  const upstreams = storage.upstreams();
  let lastPush: StoreStatus['lastPush'] = push
    ? { at: push.createdAt, ok: isCustody(push.receipt), upstream: push.upstream, detail: push.receipt }
    : null;
  // A failure newer than the last push (no receipt at all) is what the last push attempt was, while no
  // upstream has answered since: once one has (the failed one back, or another's pull), the agent is in
  // contact and the last push is the one an upstream took (an upstream's own state is on its line).
  const failure = upstreams.reduce<(typeof upstreams)[number] | undefined>(
    (a, u) => (u.lastErrorAt !== null && (!a || u.lastErrorAt > (a.lastErrorAt ?? 0)) ? u : a),
    undefined,
  );
  const failedAt = failure?.lastErrorAt ?? null;
  const answeredSince = failedAt !== null && upstreams.some((u) => (u.lastOkAt ?? 0) > failedAt);
  if (failure && failedAt !== null && (!lastPush || failedAt > lastPush.at) && !answeredSince)
    lastPush = { at: failedAt, ok: false, upstream: failure.url, detail: failure.lastError };
  const acks = epochs.flatMap((e) => (e.ackedAt === null ? [] : [e.ackedAt]));
  const dropped = storage.counter(DROPPED_BLOBS);
  return {
    site: base.site,
    agent: base.agent,
    epoch: base.epoch,
    docBytes: epochs.find((e) => e.epoch === base.epoch)?.bytes ?? 0,
    unackedRuns: storage.unackedRunCount(),
    oldestUnackedAt: storage.oldestUnackedFinish(),
    bytesPending: base.pendingChangeBytes + blobs.bytes,
    held: base.held,
    heldNews: { count: base.held.runs, until: base.held.runs > 0 ? base.held.dueBy : null },
    blobsPending: blobs.count,
    blobsAwaitingReceipt: storage.blobsAwaitingReceipt(),
    lastPush,
    lastAckAt: acks.length === 0 ? null : Math.max(...acks),
    rejections: base.rejections,
    queueBytes: base.queueBytes,
    maxQueueBytes: base.maxQueueBytes,
    boundInForce: base.queueBytes >= base.maxQueueBytes || dropped > 0,
    dropped: { blobs: dropped },
    upstreams: upstreams.map(({ cursor: _cursor, ...u }) => {
      const lastStallAt = storage.counter(lastStallOf(u.url));
      return { ...u, stalls: storage.counter(stallsOf(u.url)), lastStallAt: lastStallAt || null };
    }),
    upstreamStalls: storage.counter(STALLS),
    blobReuploads: storage.counter(REUPLOADS),
    custodyOverdue: base.custodyOverdue,
  };
}
