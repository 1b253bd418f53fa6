import { rm } from 'node:fs/promises';
import type { HopTransport } from '@driftline/hop/client';
import { Ticker } from '@driftline/hop/timing';
import type { Logger } from 'pino';
import type { RelayBackend } from '../adapters/hop/RelayBackend.js';
import { RangeFetcher } from '../adapters/http/RangeFetcher.js';
import type { RelayConfig, ResolvedUpstream } from '../config.js';
import type { ForwardEvent, UpstreamSlot } from '../core/Forwarder.js';
import { forwardRound } from '../core/forwardRound.js';
import { announcedBlobs, publicationFetchStep } from '../core/publications/publicationFetch.js';
import { pullStep } from '../core/pullStep.js';
import type { createRelayMetrics } from '../metrics.js';
import type { BlobUploader } from '../ports/BlobUploader.js';
import type { Custody } from '../ports/Custody.js';
import type { PublicationCache } from '../ports/PublicationCache.js';
import { PEER_REFRESH_MS, type UpstreamPeers } from '../upstreamPeers.js';
import { downlinkWatches } from './watches.js';

export interface RelayLoopDeps {
  custody: Custody;
  slots: UpstreamSlot[];
  upstreams: ResolvedUpstream[];
  uploader: BlobUploader;
  peers: UpstreamPeers;
  backend: RelayBackend;
  publicationCache: PublicationCache;
  metrics: ReturnType<typeof createRelayMetrics>;
  emit(e: ForwardEvent): void;
  /** Frees the dead buffers of what was taken in or forwarded now, not 64 MiB later. */
  relieve(): void;
  now(): number;
  random(): number;
  log: Logger;
  /** What carries the fetches (default: sockets). */
  transport?: HopTransport;
}

/**
 * The relay's four loops over its upstreams: peering (who this relay is upstream, its health sent up),
 * forwarding (bundles, then blobs), the downlink pull, and fetching publications (one copy per blob,
 * with Range, lowest priority).
 */
export function relayLoops(cfg: RelayConfig, d: RelayLoopDeps) {
  const { custody, slots, now, log } = d;
  const peering = new Ticker({
    step: async () => {
      await d.peers.beat();
      // what an upstream said of its watch takes effect now, not a minute later (decision 620)
      watching.kick();
      return PEER_REFRESH_MS;
    },
    restMs: PEER_REFRESH_MS,
    onError: (err) => void log.warn({ err }, 'asking upstream who this relay is failed'),
  });
  const forwarding = new Ticker({
    step: async () => {
      const wait = await forwardRound({
        custody,
        slots,
        uploader: d.uploader,
        opts: cfg.forward,
        now,
        random: d.random,
        emit: d.emit,
        removeFile: (path) => rm(path, { force: true }),
      });
      d.relieve();
      return wait;
    },
    restMs: cfg.forward.idleMs,
    onError: (err) => void log.error({ err }, 'forwarding step failed'),
  });
  const fetcher = new RangeFetcher(d.backend.blobDir, cfg.forward.requestTimeoutMs, d.transport);
  const fetchUpstreams = d.upstreams.map((u, i) => ({ ...u, retryAt: () => slots[i]?.retryAt ?? 0 }));
  // Files their manifests carried (decision 360), until the fetch loop keeps them; lost with a restart,
  // they are fetched by Range like any other.
  const inline = new Map<string, Uint8Array>();
  const fetching = new Ticker({
    step: async () => {
      const moved = await publicationFetchStep({
        cache: d.publicationCache,
        fetcher,
        upstreams: fetchUpstreams,
        now,
        uplinkBusy: () => custody.nextBatch(now(), 1, 1).length > 0,
        chunkBytes: cfg.publications.chunkBytes,
        inline,
        emit: (e) => {
          if (e.type === 'failed')
            log.warn(e, 'publication fetch interrupted; resumes from the partial file');
          else if (e.type === 'refused') log.error(e, 'publication refused');
          else if (e.type === 'held') log.info(e, 'publication held for downstream sites');
        },
      });
      return moved ? 0 : cfg.publications.intervalMs;
    },
    restMs: cfg.publications.intervalMs,
    onError: (err) => void log.error({ err }, 'publication fetch step failed'),
  });
  const pull = (from: UpstreamSlot[], sites: readonly string[]) =>
    pullStep(
      custody,
      from,
      sites,
      now,
      { pageSize: 200, maxPages: 10 },
      (u, s, reason) => log.warn({ upstream: u, site: s, reason }, 'downlink pull failed'),
      (site, items) => {
        if (items.length > 0) d.backend.held.notify(site);
        const blobs = announcedBlobs(site, items);
        if (blobs.length === 0) return;
        d.publicationCache.note(blobs);
        for (const b of blobs) if (b.inline && inline.size < MAX_INLINE_HELD) inline.set(b.sha256, b.inline);
        fetching.kick();
      },
      (u, site, ids) => {
        d.metrics.downlinkConflicts.inc({ upstream: u, site }, ids.length);
        log.warn(
          { upstream: u, site, bundleIds: ids.slice(0, 20), n: ids.length },
          'downlink copy differs from one taken under the same id: both held and served, the agent keeps the one the hub signed',
        );
      },
    );
  const watching = downlinkWatches(cfg, d, pull);
  // upstreams that hold no watch (a relay, an older hub) are pulled site by site every interval
  const pulling = new Ticker({
    step: async () => {
      const polled = slots.filter((s) => !watching.watched(s));
      if (polled.length > 0) await pull(polled, d.peers.sites());
      return cfg.forward.pullIntervalMs;
    },
    restMs: cfg.forward.pullIntervalMs,
    onError: (err) => void log.error({ err }, 'downlink pull failed'),
  });
  watching.onUnsupported = () => pulling.kick();
  d.peers.onSitesChanged = () => watching.sitesChanged();
  return { peering, forwarding, fetching, pulling, watching, fetcher };
}

/** Inline files held between a pulled page and the fetch loop (each at most 4 KiB: the schema's cap). */
const MAX_INLINE_HELD = 64;
