import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bearerToken, createHopServer, type HopServer } from '@driftline/hop';
import { tokenFromFile } from '@driftline/hop/client';
import { Ticker } from '@driftline/hop/timing';
import { bundleRef, WireError } from '@driftline/protocol';
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { loadOrCreateRelayKey } from './adapters/fs/relayKey.js';
import { RelayBackend } from './adapters/hop/RelayBackend.js';
import { HttpUpstream } from './adapters/http/HttpUpstream.js';
import { RangeFetcher } from './adapters/http/RangeFetcher.js';
import { openRelayStore } from './adapters/sqlite/openRelayStore.js';
import { TusBlobUploader } from './adapters/tus/TusBlobUploader.js';
import type { RelayConfig, ResolvedUpstream } from './config.js';
import { CustodyChains } from './core/custodyChains.js';
import type { ForwardEvent, UpstreamSlot } from './core/Forwarder.js';
import { forwardRound } from './core/forwardRound.js';
import { announcedBlobs, publicationFetchStep } from './core/publications/publicationFetch.js';
import { pullStep } from './core/pullStep.js';
import { RefusalNotices } from './core/refusalNotices.js';
import { forwardEvents } from './forwardEvents.js';
import { exposedGc, memoryRelief } from './memoryRelief.js';
import { createRelayMetrics } from './metrics.js';
import { type Clock, systemClock } from './ports/Clock.js';
import { PEER_REFRESH_MS, UpstreamPeers } from './upstreamPeers.js';

export interface RelayDeps {
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
}

/** Opens the relay's store (also used by `relay token …` without starting a server). */
export function openStore(cfg: Pick<RelayConfig, 'dataDir' | 'storage'>, clock: Clock = systemClock) {
  return openRelayStore(cfg.dataDir, { maxBytes: cfg.storage.maxBytes }, () => clock.now());
}

/**
 * Wires a relay: the hop server over SQLite custody, and three loops (tickers) per the upstreams:
 * forwarding (bundles, then blobs), the downlink pull, and fetching publications.
 */
export function createRelay(cfg: RelayConfig, upstreams: ResolvedUpstream[], deps: RelayDeps = {}) {
  const clock = deps.clock ?? systemClock;
  const now = () => clock.now();
  const random = deps.random ?? Math.random;
  const log = deps.logger ?? pino({ level: 'silent' });
  const { custody, tokens, publicationCache: openCache } = openStore(cfg, clock);
  // Made on first start; `relay key` prints it for `hub peer add NAME --key …` (decision 290).
  const key = loadOrCreateRelayKey(cfg.dataDir);
  if (key.created) log.info({ publicKey: key.publicKey, keyFile: key.path }, 'made the relay key');
  const backend = new RelayBackend(cfg.name, custody, tokens, clock, cfg.dataDir, cfg.limits);
  const registry = new Registry();
  const hop: HopServer = createHopServer(backend, {
    uploads: {
      directory: join(cfg.dataDir, 'uploads'),
      maxSize: cfg.limits.maxUploadBytes,
      expirationMs: cfg.limits.uploadExpiryHours * 3_600_000,
      admit: (peer, size, reserved) => backend.admitUpload(peer, size, reserved),
      // logged by the tus endpoint; counted here (issue 29: no quiet refusals)
      onRefused: (peer, reason) => metrics.refusals.inc({ peer: peer?.name ?? '', reason }),
    },
    maxBatchBytes: cfg.limits.maxBatchBytes,
    maxConnectionsPerClient: cfg.limits.maxConnectionsPerClient,
    headersTimeoutMs: cfg.limits.headersTimeoutMs,
    metrics: {
      public: cfg.metrics.public,
      // any peer token, or one issued with `relay token add <name> --metrics`
      authorize: async (ctx) => {
        const token = bearerToken(ctx.get('authorization'));
        if (!token) throw new WireError('unauthorized', 'no bearer token in the Authorization header');
        if (!tokens.mayReadMetrics(token))
          throw new WireError('unauthorized', 'the bearer token is unknown or revoked');
      },
    },
    registry,
    logger: log,
    now,
    // every exchange this relay serves is stamped with its key (decision 290)
    stamp: key,
  });
  backend.uploads = hop.uploads;
  // the signed records each bundle came with, passed on with this relay's own when it forwards
  const chains = new CustodyChains();
  backend.onCustody = async (bundles, records) =>
    chains.took(await Promise.all(bundles.map(bundleRef)), records, now());
  const metrics = createRelayMetrics(
    registry,
    custody,
    clock,
    cfg.dataDir,
    upstreams.map((u) => u.name),
  );
  backend.onRefused = (peer, reason, n) => {
    metrics.peerRefusals.inc({ peer, reason }, n);
    log.warn({ peer, reason, n }, 'refused a downstream peer');
  };
  // A token file is read again when it changes (`hub peer rotate`): no restart (decision 240).
  const tokenOf = (u: ResolvedUpstream, file: string | undefined) =>
    file
      ? tokenFromFile(file, {
          initial: u.token,
          onChange: (path) =>
            log.info({ upstream: u.name, tokenFile: path }, 'token file changed; using the new token'),
          onProblem: (path, problem) =>
            log.warn({ upstream: u.name, tokenFile: path }, `token file: ${problem}`),
        })
      : u.token;
  const http = upstreams.map(
    (u, i) =>
      new HttpUpstream(
        u.name,
        u.url,
        tokenOf(u, cfg.upstreams[i]?.tokenFile),
        cfg.forward.requestTimeoutMs,
        cfg.limits.maxResponseBytes,
        now,
        { key, chains },
      ),
  );
  const slots: UpstreamSlot[] = upstreams.map((u, i) => ({
    upstream: http[i] as HttpUpstream,
    plan: u.plan,
    failures: 0,
    retryAt: 0,
  }));

  const uploader = new TusBlobUploader(new Map(http.map((h) => [h.name, h.client])));
  // Who this relay is at each upstream and the sites it acts for there; its own health goes up too.
  const peers = new UpstreamPeers({
    configured: cfg.sites,
    upstreams: http,
    custody,
    version: backend.version,
    now,
    log,
  });
  const logEvent = forwardEvents(metrics, log);
  // refused bundles go back to their agents as notices with the site's downlink (decision 240)
  const notices = new RefusalNotices(cfg.name);
  backend.refusalsFor = (site) => notices.for(site, now());
  const emit = (e: ForwardEvent) => {
    logEvent(e);
    if (e.type === 'refused') notices.note(e, now());
    peers.note(e).catch((err) => log.warn({ err }, 'checking a refusal with upstream failed'));
  };
  const peering = new Ticker({
    step: async () => {
      await peers.refresh();
      await peers.report();
      return PEER_REFRESH_MS;
    },
    restMs: PEER_REFRESH_MS,
    onError: (err) => void log.warn({ err }, 'asking upstream who this relay is failed'),
  });
  // Dead buffers of the batches and blobs taken in or forwarded are freed now, not 64 MiB later.
  const relieve = memoryRelief({ gc: exposedGc() });
  const forwarding = new Ticker({
    step: async () => {
      const wait = await forwardRound({
        custody,
        slots,
        uploader,
        opts: cfg.forward,
        now,
        random,
        emit,
        removeFile: (path) => rm(path, { force: true }),
      });
      relieve();
      return wait;
    },
    restMs: cfg.forward.idleMs,
    onError: (err) => void log.error({ err }, 'forwarding step failed'),
  });
  backend.onWork = () => {
    relieve();
    forwarding.kick();
  };

  // Publications: one copy per blob, fetched with Range from the upstream, lowest priority.
  const publicationCache = openCache(cfg.publications.quotaBytes);
  const fetcher = new RangeFetcher(backend.blobDir, cfg.forward.requestTimeoutMs);
  const fetchUpstreams = upstreams.map((u, i) => ({ ...u, retryAt: () => slots[i]?.retryAt ?? 0 }));
  const fetching = new Ticker({
    step: async () => {
      const moved = await publicationFetchStep({
        cache: publicationCache,
        fetcher,
        upstreams: fetchUpstreams,
        now,
        uplinkBusy: () => custody.nextBatch(now(), 1, 1).length > 0,
        chunkBytes: cfg.publications.chunkBytes,
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

  const pulling = new Ticker({
    step: async () => {
      await pullStep(
        custody,
        slots,
        peers.sites(),
        now,
        { pageSize: 200, maxPages: 10 },
        (u, s, reason) => log.warn({ upstream: u, site: s, reason }, 'downlink pull failed'),
        (site, items) => {
          if (items.length > 0) backend.held.notify(site);
          const blobs = announcedBlobs(site, items);
          if (blobs.length === 0) return;
          publicationCache.note(blobs);
          fetching.kick();
        },
        (u, site, ids) => {
          metrics.downlinkConflicts.inc({ upstream: u, site }, ids.length);
          log.warn(
            { upstream: u, site, bundleIds: ids.slice(0, 20), n: ids.length },
            'downlink copy differs from one taken under the same id: both held and served, the agent keeps the one the hub signed',
          );
        },
      );
      return cfg.forward.pullIntervalMs;
    },
    restMs: cfg.forward.pullIntervalMs,
    onError: (err) => void log.error({ err }, 'downlink pull failed'),
  });

  return {
    hop,
    backend,
    custody,
    tokens,
    registry,
    publicationCache,
    /** What each upstream says this relay is, and its own health as sent upstream. */
    peers,
    /** Listens and starts the loops. */
    async start(): Promise<{ url: string; port: number }> {
      const addr = await hop.listen(cfg.listen.port, cfg.listen.host);
      if (slots.length > 0) {
        peering.start();
        forwarding.start();
        pulling.start();
        fetching.start();
      }
      log.info({ url: addr.url, upstreams: upstreams.map((u) => u.name) }, 'relay listening');
      return addr;
    },
    /** Wakes the forwarder now (tests; a new bundle does it by itself). */
    poke: () => forwarding.kick(),
    async stop(): Promise<void> {
      const loops = [forwarding.stop(), pulling.stop(), fetching.stop(), peering.stop()];
      fetcher.abort();
      for (const h of http) h.client.abort();
      backend.held.releaseAll();
      await Promise.all([...loops, hop.close()]);
      custody.close();
    },
  };
}
export type Relay = ReturnType<typeof createRelay>;
