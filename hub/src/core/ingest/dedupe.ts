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
 * Step 2, dedupe: a bundle already stored (or met earlier in this batch) gets a `duplicate` receipt and
 * goes no further (D2: a resend changes nothing). The rest are grouped by document.
 */
export async function dedupe(b: Batch, accepted: readonly Accepted[]): Promise<DocGroup[]> {
  const seen = new Set<string>();
  const groups = new Map<string, DocGroup>();
  for (const a of accepted) {
    if (seen.has(a.id) || (await b.store.hasBundle(a.id))) {
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
