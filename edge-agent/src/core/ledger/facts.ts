import type { AgentFacts } from '@driftline/protocol';
import type { RecordRunInput } from '../../ports/Ledger.js';
import { canonicalJson } from '../plan/canonical.js';

export type GivenFacts = NonNullable<RecordRunInput['facts']>;

/**
 * The facts to write into the document: those given, with the queue's depth, its oldest unsent result
 * and the report time; null when only the report time would change (nothing to tell the hub).
 */
export function factsToWrite(
  current: Record<string, unknown> | null,
  given: GivenFacts,
  queue: {
    depth: number;
    oldest: number | null;
    uploads?: AgentFacts['detailUploads'];
    custodyOverdue?: AgentFacts['custodyOverdue'];
  },
  now: number,
): AgentFacts | null {
  const full = {
    ...given,
    queueDepth: queue.depth,
    oldestUnsentAt: queue.oldest ?? undefined,
    // Detail blobs awaiting a hub receipt (an empty list is no key: the hub shows nothing pending).
    ...(queue.uploads ? { detailUploads: queue.uploads.length > 0 ? queue.uploads : undefined } : {}),
    // Upstreams that sat on custody (decision 575): none is no key.
    ...(queue.custodyOverdue?.length ? { custodyOverdue: queue.custodyOverdue } : {}),
  };
  if (current) {
    const { reportedAt: _r, ...was } = current;
    if (canonicalJson(was) === canonicalJson(full)) return null;
  }
  return { ...full, reportedAt: now };
}
