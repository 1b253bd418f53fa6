import type { DocReplicas } from '../DocReplicas.js';
import type { DocGroup } from './dedupe.js';

export type MergeJob = DocGroup & { job: ReturnType<DocReplicas['merge']> };

/**
 * Step 3, merge: each document's bundles are merged together, all documents at once (in merge workers
 * when the hub has them). The jobs are awaited one document at a time, in order, by the caller; a
 * failed job fails the batch there.
 */
export function startMerges(replicas: DocReplicas, groups: readonly DocGroup[]): MergeJob[] {
  return groups.map((g) => {
    const job = replicas.merge(
      g.docId,
      g.site,
      g.agent,
      g.items.map((i) => i.v.payload.changes),
      g.items.map((i) => i.v.heartbeat ?? null),
      g.items.some((i) => i.v.wire2 !== undefined),
    );
    job.catch(() => {});
    return { ...g, job };
  });
}
