import type { Custody, FinishedUpload, HopBackend, Peer, SourceClocks } from '@driftline/hop';
import type { DocPublicationState, DownlinkQuery, Receipt, RelayStatus } from '@driftline/protocol';
import type { Committed, Ingest } from '../../core/Ingest.js';
import { deliveryRows } from '../../core/publish/manifests.js';
import type { Clock } from '../../ports/Clock.js';
import type { PublicationStore } from '../../ports/PublicationStore.js';

/**
 * Wraps the hub's hop backend: records the agents' publication delivery states (each document's `bundles` map,
 * which Ingest reads when a batch changed it) before the batch's receipts are returned. A failure
 * here is logged and never fails the receipt (the next change to the map reports the states again).
 */
export class DeliveryObserver implements HopBackend {
  readonly role = 'hub' as const;

  constructor(
    private readonly inner: HopBackend,
    private readonly d: {
      ingest: Pick<Ingest, 'onCommitted'>;
      publications: PublicationStore;
      clock: Clock;
      onError: (e: unknown) => void;
      onReported?: (publicationIds: string[]) => void;
    },
  ) {
    d.ingest.onCommitted((c) => {
      if (c.deliveries.length > 0) this.report(c.deliveries);
    });
  }

  /** Reports in the order batches committed; `accept` waits for them. */
  private reporting: Promise<void> = Promise.resolve();

  get name() {
    return this.inner.name;
  }
  get version() {
    return this.inner.version;
  }
  get wire2() {
    return this.inner.wire2;
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
  get watchMaxS() {
    return this.inner.watchMaxS;
  }
  watchDownlink(cursors: ReadonlyMap<string, number>, ms: number, signal: AbortSignal) {
    return this.inner.watchDownlink?.(cursors, ms, signal) ?? Promise.resolve([]);
  }
  uploadFinished(peer: Peer | null, upload: FinishedUpload): Promise<void> {
    return this.inner.uploadFinished(peer, upload);
  }
  acceptStatus(peer: Peer, status: RelayStatus): Promise<void> {
    return this.inner.acceptStatus?.(peer, status) ?? Promise.resolve();
  }
  health() {
    return this.inner.health();
  }

  async accept(
    peer: Peer,
    bundles: readonly Uint8Array[],
    clocks?: SourceClocks,
    custody?: Custody,
  ): Promise<Receipt[]> {
    // the signed timing chain goes through too (decision 290)
    const receipts = await this.inner.accept(peer, bundles, clocks, custody);
    await this.reporting;
    return receipts;
  }

  /** Records the delivery states a committed batch read (Ingest reads them while the replica is open). */
  private report(deliveries: Committed['deliveries']): void {
    this.reporting = this.reporting.then(async () => {
      try {
        const ids = new Set<string>();
        for (const { site, agent, states } of deliveries) {
          if (!states || typeof states !== 'object') continue;
          const rows = deliveryRows(
            site,
            agent,
            states as Record<string, DocPublicationState>,
            this.d.clock.now(),
          );
          await this.d.publications.report(rows);
          for (const r of rows) ids.add(r.publicationId);
        }
        if (ids.size > 0) this.d.onReported?.([...ids]);
      } catch (e) {
        this.d.onError(e);
      }
    });
  }
}
