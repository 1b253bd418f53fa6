import { wire2 } from '@driftline/protocol';
import type { IngestDeps } from '../ingestTypes.js';
import { type KeyCache, type Verified, verifyDocDelta } from '../verify.js';
import { verifyWire2Push, type Wire2Directory } from '../wire2Push.js';
import type { Batch } from './batch.js';

type Ok = Extract<Verified, { ok: true }>;
/** A bundle that passed verification, with its place in the batch. */
export type Accepted = { index: number; id: Ok['bundle']['header']['id']; v: Ok };

/**
 * Step 1, verify: decodes each bundle and checks its signature against the enrolled agent's key.
 * Signatures are checked by WebCrypto, asynchronously: verifying the whole batch at once overlaps them.
 * A refused bundle gets its `rejected` receipt here; one that names its agent is also answered on the
 * downlink.
 */
export async function verifyAll(
  b: Batch,
  bundles: readonly Uint8Array[],
  keys: KeyCache,
  count: IngestDeps['count'],
  /** Hop v2 pushes (decision 495): who their short ids are, and the posting peer's sites. */
  v2?: { directory: Wire2Directory; scope?: readonly string[] | undefined },
): Promise<Accepted[]> {
  const lookup = (site: string, agent: string) => b.agent(site, agent);
  const verified = await Promise.all(
    bundles.map((bytes) =>
      v2 && wire2.isWire2Message(bytes)
        ? verifyWire2Push(bytes, v2.directory, lookup, keys, b.now, v2.scope)
        : verifyDocDelta(bytes, lookup, keys),
    ),
  );
  const accepted: Accepted[] = [];
  for (const [index, v] of verified.entries()) {
    if (v.ok) {
      accepted.push({ index, id: v.bundle.header.id, v });
      continue;
    }
    count.refused(v.reason);
    if (v.source && v.bundleId) b.refusals.push({ ...v.source, code: v.code, bundleId: v.bundleId });
    b.receipts[index] = {
      bundleId: v.bundleId,
      index,
      status: 'rejected',
      code: v.code,
      message: v.message,
      by: 'hub',
    };
  }
  return accepted;
}
