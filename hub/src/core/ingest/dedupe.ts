import type { Batch } from './batch.js';
import type { Accepted } from './verifyAll.js';

/** The verified, new bundles of one document, in batch order: merged together. */
export interface DocGroup {
  docId: string;
  site: string;
  agent: string;
  epoch: number;
  items: Accepted[];
}

/**
 * Step 2, dedupe (under the documents' lock, so a bundle that reached two hubs at once is stored by one
 * and a `duplicate` at the other): a bundle already stored (or met earlier in this batch) gets a `duplicate` receipt and
 * goes no further (D2: a resend changes nothing). The rest are grouped by document.
 */
export async function dedupe(b: Batch, accepted: readonly Accepted[]): Promise<DocGroup[]> {
  const seen = new Set<string>();
  const groups = new Map<string, DocGroup>();
  // Asked all at once: one wait for the batch, not one per bundle (a database store answers in parallel).
  const stored = await Promise.all(accepted.map((a) => b.store.hasBundle(a.id)));
  for (const [i, a] of accepted.entries()) {
    if (seen.has(a.id) || stored[i]) {
      b.receipts[a.index] = { bundleId: a.id, index: a.index, status: 'duplicate', by: 'hub' };
      continue;
    }
    seen.add(a.id);
    const { doc } = a.v;
    let g = groups.get(doc.id);
    if (!g) {
      g = { docId: doc.id, site: doc.site, agent: doc.agent, epoch: doc.epoch, items: [] };
      groups.set(doc.id, g);
    }
    g.items.push(a);
  }
  return [...groups.values()];
}
