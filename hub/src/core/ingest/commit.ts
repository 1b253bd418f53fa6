import type { StoreWrites } from '../../ports/HubStore.js';
import type { DocReplicas } from '../DocReplicas.js';
import type { Batch } from './batch.js';

/**
 * Step 9, commit: everything the batch decided, in one transaction (D1). Agents are written only when
 * a bundle of theirs was stored. If the commit fails the replicas forget the documents it touched (they
 * reload from the store next time); either way the replicas settle.
 */
export async function commitBatch(store: StoreWrites, replicas: DocReplicas, b: Batch): Promise<void> {
  try {
    await store.commit({
      ...b.w,
      agents: [...b.agents.values()].filter((a) => a.lastContactAt === b.now),
      cells: [...b.changedCells.values()],
      sites: [...b.sites.values()],
      planRequests: [...b.doneRequests.values()],
      applies: b.applies,
      approvals: [...b.approvals.values()],
    });
  } catch (e) {
    replicas.forget(b.touchedDocs.keys());
    throw e;
  } finally {
    replicas.settle();
  }
}
