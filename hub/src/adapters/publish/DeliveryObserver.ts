import type { FinishedUpload, HopBackend, Peer } from '@driftline/hop';
import {
  type DocBundleState,
  type DownlinkQuery,
  decodeBundle,
  parseDocId,
  type Receipt,
} from '@driftline/protocol';
import { DocReader } from '../../core/DocReader.js';
import type { DocReplicas } from '../../core/DocReplicas.js';
import { deliveryRows } from '../../core/publish/manifests.js';
import type { BundleStore } from '../../ports/BundleStore.js';
import type { Clock } from '../../ports/Clock.js';

/**
 * Wraps the hub's hop backend: after a batch is merged, reads the `bundles` map of each document it
 * touched and records the agents' delivery states. Ingest itself is untouched; a failure here is
 * logged and never fails the receipt (the next delta reports the state again).
 */
export class DeliveryObserver implements HopBackend {
  readonly role = 'hub' as const;

  constructor(
    private readonly inner: HopBackend,
    private readonly d: {
      replicas: DocReplicas;
      bundles: BundleStore;
      clock: Clock;
      onError: (e: unknown) => void;
      onReported?: (bundleIds: string[]) => void;
    },
  ) {}

  get name() {
    return this.inner.name;
  }
  get version() {
    return this.inner.version;
  }
  get blobs() {
    return this.inner.blobs;
  }
  authenticate(token: string): Promise<Peer | null> {
    return this.inner.authenticate(token);
  }
  downlink(peer: Peer, q: DownlinkQuery) {
    return this.inner.downlink(peer, q);
  }
  uploadFinished(peer: Peer | null, upload: FinishedUpload): Promise<void> {
    return this.inner.uploadFinished(peer, upload);
  }
  health() {
    return this.inner.health();
  }

  async accept(peer: Peer, bundles: readonly Uint8Array[]): Promise<Receipt[]> {
    const receipts = await this.inner.accept(peer, bundles);
    try {
      const docs = new Set<string>();
      for (const r of receipts) {
        if (r.status !== 'stored') continue;
        const d = decodeBundle(bundles[r.index] as Uint8Array);
        if (d.ok && d.value.header.kind === 'doc-delta' && d.value.header.doc) docs.add(d.value.header.doc);
      }
      const ids = new Set<string>();
      for (const docId of docs) {
        const who = parseDocId(docId);
        if (!who) continue;
        // Read only the `bundles` map, from the replica's handle: a whole readable copy of the document
        // after every accept would cost in proportion to the document, not to the change.
        const map = new DocReader(await this.d.replicas.handle(docId)).root('bundles') as
          | Record<string, DocBundleState>
          | undefined;
        if (!map) continue;
        const rows = deliveryRows(who.site, who.agent, map, this.d.clock.now());
        await this.d.bundles.report(rows);
        for (const r of rows) ids.add(r.bundleId);
      }
      if (ids.size > 0) this.d.onReported?.([...ids]);
    } catch (e) {
      this.d.onError(e);
    }
    return receipts;
  }
}
