import type { Peer } from '@driftline/hop';
import type { IngestStore } from '../../ports/HubStore.js';
import type { PublicationStore } from '../../ports/PublicationStore.js';

/**
 * Whether a downstream peer may read a blob from the hub (S4 in docs/architecture.md#invariants: a peer acts only for its own
 * sites): a file published to one of its sites, or a blob an agent of one of its sites announced.
 * A peer whose token covers `*` reads every blob.
 */
export async function peerMayRead(
  peer: Peer,
  sha256: string,
  d: { store: Pick<IngestStore, 'docsAnnouncing'>; publications: PublicationStore },
): Promise<boolean> {
  if (peer.sites.includes('*')) return true;
  for (const site of peer.sites) {
    const published = await d.publications.listPublications(site);
    if (published.some((p) => p.sha256 === sha256)) return true;
  }
  const docs = await d.store.docsAnnouncing(sha256);
  return docs.some((doc) => peer.sites.includes(doc.split('/')[0] ?? ''));
}
