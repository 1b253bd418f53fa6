import { concatBytes } from '@driftline/protocol';
import { applyRows } from '../applyRows.js';
import type { IngestDeps } from '../ingestTypes.js';
import { recordApprovalWords } from './approvalWords.js';
import type { Batch } from './batch.js';
import { noteConfirmations, recordConfirmations } from './confirmations.js';
import { type PathClocks, recordContact } from './contact.js';
import { readSegment } from './segment.js';
import type { MergeJob } from './startMerges.js';

/**
 * One document's part of a batch, after its merge: each bundle the merge took is stored (its changes
 * as a chunk unless the merge compacted the document, its blob announcements) and updates the agent's
 * contact (step 7); each one it refused splits the document into segments, each read as far as it got
 * (step 4). Delivery states, apply records and a compacted whole document come last.
 */
export async function ingestDocument(
  b: Batch,
  d: Pick<IngestDeps, 'log' | 'count' | 'webhookUrls'>,
  doc: MergeJob,
  peerName: string,
  clocks: PathClocks | undefined,
): Promise<void> {
  const { docId, site, agent, epoch } = doc;
  const { out, memo } = await doc.job;
  noteConfirmations(b, site, agent, out.requests);
  let offsetMs: number | null = null;
  const read = (n: number) =>
    readSegment(b, d, { site, agent, docId, memo, offsetMs: offsetMs ?? 0 }, out.segments[n]);
  let segment = 0;
  for (const [n, { index, id, v }] of doc.items.entries()) {
    const merged = out.items[n];
    if (v.heartbeat) d.count.heartbeat?.(merged?.ok ? 'rebuilt' : 'refused');
    if (!merged?.ok) {
      // What the bundles before it changed is good: read it, then go on without this one.
      await read(segment++);
      const mismatch = merged?.reason === 'agent-mismatch' ? merged : null;
      d.count.refused(mismatch ? 'agent-mismatch' : 'bad-bundle');
      if (mismatch) b.poisoned.add(docId);
      const code = mismatch ? 'forbidden' : 'bad-bundle';
      b.refusals.push({ site, agent, code, bundleId: id });
      b.receipts[index] = {
        bundleId: id,
        index,
        status: 'rejected',
        code,
        message: mismatch
          ? `document '${docId}' says it belongs to '${String(mismatch.docSite)}/${String(mismatch.docAgent)}', not the signing agent '${site}/${agent}'`
          : `the bundle's changes are not Automerge changes (${merged?.reason === 'bad-changes' ? merged.message : 'not merged'}): the agent must resend them`,
        by: 'hub',
      };
      continue;
    }
    b.w.bundles.push({ id, receivedAt: b.now });
    if (merged.changed && !out.whole)
      b.w.docChunks.push({
        docId,
        site,
        agent,
        epoch,
        // a heartbeat's change is stored as if it had come as bytes (decision 500)
        bytes: merged.rebuilt ? concatBytes(v.payload.changes, merged.rebuilt) : v.payload.changes,
      });
    for (const blob of v.payload.blobs)
      b.w.announcements.push({ sha256: blob.sha256, docId, runId: blob.runId ?? null });
    const contact = await recordContact(b, v, peerName, clocks, merged.changed);
    offsetMs = contact.offsetMs;
    if (contact.held) {
      d.count.clockHeld?.(contact.held);
      d.log.warn(
        { site, agent, bundleId: id, peer: peerName, reason: contact.held, claimed: v.agent.clockHeld },
        contact.held === 'jump'
          ? "held back a clock estimate that jumps beyond the current one's uncertainty: the offset stays; check the peer's clock (docs/decisions/230-time-a-hop-cannot-forge.md)"
          : 'refused a clock estimate that would date the bundle after its arrival or before the previous one: the offset stays; check the peer (docs/decisions/230-time-a-hop-cannot-forge.md)',
      );
    }
    b.receipts[index] = { bundleId: id, index, status: 'stored', by: 'hub' };
    b.touchedDocs.set(docId, {
      site,
      agent,
      heads: out.heads,
      readsConfirmed: out.readsConfirmed === true,
      writesHeartbeats: out.writesHeartbeats === true,
      // Acked by a v2 message naming the push only when the hub holds the heads the agent signed it at
      // (docs/decisions/495-hop-v2-on-the-agent-link.md): a push carries only what came after the last
      // custody, so when an upstream took custody of an earlier push and lost it, the push's changes wait
      // for the lost ones, or it carried none (blob announcements only). Then the ack is v1's, of the
      // heads the hub holds, and the agent sends what came after them again (D4).
      wire2: (v.payload.changes.length > 0 || v.heartbeat) && !out.waitsForDeps ? v.wire2 : undefined,
    });
  }
  await read(segment);
  await recordConfirmations(b, site, agent, offsetMs ?? 0);
  if (out.publications !== undefined) b.deliveries.push({ docId, site, agent, states: out.publications });
  if (out.applies !== undefined) {
    const a = applyRows(site, agent, out.applies, offsetMs ?? 0);
    b.applies.push(...a.rows);
    await recordApprovalWords(b, site, agent, a.rows);
    if (a.invalid.length > 0)
      d.log.warn({ docId, invalid: a.invalid }, 'skipped apply records that fail their schema');
  }
  if (out.whole) b.w.docChunks.push({ docId, site, agent, epoch, bytes: out.whole, whole: true });
}
