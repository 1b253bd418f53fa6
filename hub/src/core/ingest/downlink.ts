import type { Rejections } from '../rejections.js';
import type { AckSigner } from './acks.js';
import type { Batch } from './batch.js';
import { type DeferredAcks, type HeldAck, heldAckKey, heldAckRow } from './deferredAcks.js';

/**
 * Step 8, answers on the downlink: a rejection per refused source (rate-limited by `Rejections`), and
 * an ack of the hub's heads for every document that took a bundle, naming the blobs the hub holds for
 * it (stored, or arriving in this batch), so the agent may prune (D4). A document whose bundles claimed
 * another agent is not acked. Acks are signed concurrently. A v2 push of a round under way (`ackLater`)
 * has its ack held for the agent's next push (`deferred`, docs/decisions/525-acks-wait-for-the-round.md).
 */
export async function answerOnDownlink(
  b: Batch,
  rejections: Rejections,
  acks: AckSigner,
  deferred?: DeferredAcks,
): Promise<void> {
  b.w.downlink.push(...(await rejections.rows(b.refusals, b.now)));
  const signing: Promise<void>[] = [];
  for (const [docId, who] of b.touchedDocs) {
    rejections.accepted(who.site, who.agent);
    if (b.poisoned.has(docId)) continue;
    const states = { readsConfirmed: who.readsConfirmed === true, heartbeats: who.writesHeartbeats === true };
    // the agent's ack held before (by an earlier batch, or this one's earlier document): this document's
    // ack covers it (by heads), another document's goes now; decided here, applied once the batch commits
    const k = heldAckKey(who.site, who.agent);
    const decided = b.heldAcks.get(k);
    const before = decided ? (decided.hold ?? undefined) : deferred?.peek(who.site, who.agent);
    if (before && before.docId !== docId) b.w.downlink.push(await heldAckRow(b.store, acks, before));
    if (deferred) b.heldAcks.set(k, { site: who.site, agent: who.agent, hold: null });
    const later = who.wire2?.ackLaterS;
    if (deferred && who.wire2 && later !== undefined && deferred.hasRoom(who.site, who.agent)) {
      const h: HeldAck = {
        docId,
        who: { site: who.site, agent: who.agent, wire2: who.wire2 },
        states,
        committedAt: b.now,
        // a chain of held acks goes by the first one's time at the latest
        dueAt: Math.min(
          before?.docId === docId ? before.dueAt : Number.POSITIVE_INFINITY,
          b.now + later * 1000,
        ),
      };
      if (h.dueAt > b.now) {
        b.heldAcks.set(k, { site: who.site, agent: who.agent, hold: h });
        continue;
      }
    }
    // the blobs it holds for the document are read only for an ack sent now (a held one reads them when sent)
    const held = new Set(await b.store.heldBlobsFor(docId));
    for (const a of b.w.announcements)
      if (a.docId === docId && (await b.store.getBlob(a.sha256))) held.add(a.sha256);
    const blobs = [...held].sort();
    // a v2 push the hub holds whole is acked by a v2 message naming it (document.ts says when)
    const { row, signed } = who.wire2
      ? acks.rowWire2({ ...who, wire2: who.wire2 }, docId, blobs, b.now, states)
      : acks.row(who, docId, who.heads, blobs, b.now, who.readsConfirmed);
    b.w.downlink.push(row);
    signing.push(signed);
  }
  await Promise.all(signing);
}
