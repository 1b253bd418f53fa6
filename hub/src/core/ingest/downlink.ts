import type { Rejections } from '../rejections.js';
import type { AckSigner } from './acks.js';
import type { Batch } from './batch.js';

/**
 * Step 8, answers on the downlink: a rejection per refused source (rate-limited by `Rejections`), and
 * an ack of the hub's heads for every document that took a bundle, naming the blobs the hub holds for
 * it (stored, or arriving in this batch), so the agent may prune (D4). A document whose bundles claimed
 * another agent is not acked. Acks are signed concurrently.
 */
export async function answerOnDownlink(b: Batch, rejections: Rejections, acks: AckSigner): Promise<void> {
  b.w.downlink.push(...(await rejections.rows(b.refusals, b.now)));
  const signing: Promise<void>[] = [];
  for (const [docId, who] of b.touchedDocs) {
    rejections.accepted(who.site, who.agent);
    if (b.poisoned.has(docId)) continue;
    const held = new Set(await b.store.heldBlobsFor(docId));
    for (const a of b.w.announcements)
      if (a.docId === docId && (await b.store.getBlob(a.sha256))) held.add(a.sha256);
    const blobs = [...held].sort();
    // a v2 push is acked by a v2 message naming it (docs/decisions/495-hop-v2-on-the-agent-link.md)
    const { row, signed } = who.wire2
      ? acks.rowWire2({ ...who, wire2: who.wire2 }, docId, blobs, b.now, {
          readsConfirmed: who.readsConfirmed === true,
          heartbeats: who.writesHeartbeats === true,
        })
      : acks.row(who, docId, who.heads, blobs, b.now, who.readsConfirmed);
    b.w.downlink.push(row);
    signing.push(signed);
  }
  await Promise.all(signing);
}
