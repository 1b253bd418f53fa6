import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { DiskCap } from '../adapters/fs/DiskCap.js';
import type { FileBlobs } from '../adapters/fs/FileBlobs.js';
import { CustodyClocks, chainMessage, custodyChainCounter } from '../adapters/hop/custodyClocks.js';
import { HubHopBackend } from '../adapters/hop/HubHopBackend.js';
import { HubWire2 } from '../adapters/hop/HubWire2.js';
import { peerMayRead } from '../adapters/hop/peerMayRead.js';
import { DeliveryObserver } from '../adapters/publish/DeliveryObserver.js';
import type { HubConfig } from '../config.js';
import type { DocReplicas } from '../core/DocReplicas.js';
import { type DownlinkBell, SHARED_RECHECK_MS } from '../core/downlinkBell.js';
import type { Ingest } from '../core/Ingest.js';
import type { LiveEvents } from '../core/liveEvents.js';
import type { HubMetrics } from '../metrics.js';
import type { Clock } from '../ports/Clock.js';
import type { HubStore } from '../ports/HubStore.js';
import type { PublicationStore } from '../ports/PublicationStore.js';

/**
 * What the hop server serves: ingest and the downlink over the store, within the data directory's cap,
 * the signed per-hop timing chain checked against the enrolled keys (decision 290), each delivery of a
 * publication recorded. Returns the backend, the disk cap and where tus uploads go.
 */
export function hubHopBackend(
  config: HubConfig,
  deps: {
    store: HubStore;
    publications: PublicationStore;
    health?: ConstructorParameters<typeof HubHopBackend>[0]['health'];
    ingest: Ingest;
    replicas: DocReplicas;
    blobs: FileBlobs;
    clock: Clock;
    version: string;
    live: LiveEvents;
    metrics: HubMetrics;
    registry: Registry;
    logger: Logger;
    /** Signs the hub's v2 answers (decision 495). */
    hubPrivateKey: CryptoKey;
    /** Rung by each downlink commit (decision 620). */
    bell: DownlinkBell;
    /** Other hubs share the store (PostgreSQL): held watches read it again now and then. */
    shared: boolean;
    /** How often, when shared, ms (default `SHARED_RECHECK_MS`). */
    watchRecheckMs?: number;
  },
) {
  const { store, publications, clock, logger, metrics } = deps;
  const uploadsDir = join(config.dataDir, 'uploads');
  const disk = new DiskCap(config.dataDir, config.storage.maxBytes, uploadsDir, () => clock.now());
  const chainOutcomes = custodyChainCounter(deps.registry);
  const custodyClocks = new CustodyClocks({
    listPeers: () => store.listPeers(),
    getAgent: (site, agent) => store.getAgent(site, agent),
    now: () => clock.now(),
    onChain: (e) => {
      chainOutcomes.inc({ outcome: e.outcome });
      if (e.outcome !== 'signed')
        logger.warn(
          { source: e.source, peer: e.peer, outcome: e.outcome, plain: e.plain, signed: e.signed },
          chainMessage(e),
        );
    },
  });
  const backend = new HubHopBackend({
    store,
    ...(deps.health ? { health: deps.health } : {}),
    ingest: deps.ingest,
    replicas: deps.replicas,
    blobs: deps.blobs,
    clock,
    version: deps.version,
    onDelivered: (rs) => {
      for (const r of rs) deps.live.requestRow(r);
    },
    onExpiredDownlink: metrics.expiredDownlink,
    onForeignSite: (peer, n) => {
      metrics.refused('foreign-site', n);
      // the relay's own status names the sites and the exact command; this line says where to look
      logger.warn(
        { peer, refused: n },
        `refused bundles from peer '${peer}' for sites it does not act for; see GET /api/relays, and let it with \`hub peer sites ${peer} --sites …\``,
      );
    },
    mayRead: (peer, sha) => peerMayRead(peer, sha, { store, publications }),
    checkDisk: (n) => disk.check(n),
    custodyClocks,
    bell: deps.bell,
    ...(deps.shared ? { watchRecheckMs: deps.watchRecheckMs ?? SHARED_RECHECK_MS } : {}),
  });
  backend.wire2 = new HubWire2({
    directory: deps.ingest.directory,
    keys: deps.ingest.keys,
    getAgent: (site, agent) => store.getAgent(site, agent),
    hubPrivateKey: deps.hubPrivateKey,
  });
  const observed = new DeliveryObserver(backend, {
    ingest: deps.ingest,
    publications,
    clock,
    onError: (e) => logger.error({ err: e }, 'recording publication delivery state failed'),
  });
  return { backend: observed, disk, uploadsDir };
}
