import type { Custody } from '../ports/Custody.js';
import { type BlobForwarderDeps, forwardBlob } from './BlobForwarder.js';
import { type ForwarderOptions, forwardStep } from './Forwarder.js';

/**
 * One round of the relay's uplink: a batch of bundles, or, when no bundle waits, one blob (status
 * before blobs, step 6 of docs/architecture.md#the-trip). Answers the wait before the next round (0: more to do now).
 */
export async function forwardRound(
  d: BlobForwarderDeps & { custody: Custody; opts: ForwarderOptions },
): Promise<number> {
  const r = await forwardStep(d.custody, d.slots, d.opts, d.now, d.random, d.emit);
  if (r.sent > 0) return 0;
  if (d.custody.nextBatch(d.now(), 1, 1).length === 0 && (await forwardBlob(d))) return 0;
  return r.waitMs;
}
