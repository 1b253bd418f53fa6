import { wire2NodeId } from '@driftline/hop';
import type { HopTransport } from '@driftline/hop/client';
import { bundleRef } from '@driftline/protocol';
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { loadOrCreateRelayKey } from './adapters/fs/relayKey.js';
import { RelayBackend } from './adapters/hop/RelayBackend.js';
import { RelayWire2 } from './adapters/hop/RelayWire2.js';
import { openRelayStore } from './adapters/sqlite/openRelayStore.js';
import { TusBlobUploader } from './adapters/tus/TusBlobUploader.js';
import type { RelayConfig, ResolvedUpstream } from './config.js';
import { CustodyChains } from './core/custodyChains.js';
import type { ForwardEvent } from './core/Forwarder.js';
import { RefusalNotices } from './core/refusalNotices.js';
import { forwardEvents } from './forwardEvents.js';
import { exposedGc, memoryRelief } from './memoryRelief.js';
import { createRelayMetrics } from './metrics.js';
import { type Clock, systemClock } from './ports/Clock.js';
import { relayHopServer } from './start/hopServer.js';
import { relayLoops } from './start/loops.js';
import { relayUpstreams } from './start/upstreams.js';
import { UpstreamPeers } from './upstreamPeers.js';

export interface RelayDeps {
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
  /** What carries the exchanges with upstreams (default: sockets; a deterministic world's links). */
  transport?: HopTransport;
  /**
   * How often the tokens behind open held pulls and uploads are checked again, ms (default 1000, decision
   * 411). A world that revokes nothing looks less often: the look is an event of its clock.
   */
  revocationCheckMs?: number;
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
  const onUploadRefused = (peer: string, reason: string) => metrics.refusals.inc({ peer, reason });
  const hop = relayHopServer(cfg, {
    backend,
    tokens,
    registry,
    log,
    now,
    key,
    onUploadRefused,
    ...(deps.revocationCheckMs ? { revocationCheckMs: deps.revocationCheckMs } : {}),
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
  const { http, slots } = relayUpstreams(cfg, upstreams, {
    now,
    log,
    key,
    chains,
    ...(deps.transport ? { transport: deps.transport } : {}),
  });
  const uploader = new TusBlobUploader(
    new Map(http.map((h) => [h.name, h.client])),
    cfg.forward.stallS * 1000,
  );
  // Who this relay is at each upstream and the sites it acts for there; its own health goes up too.
  const peers = new UpstreamPeers({
    configured: cfg.sites,
    upstreams: http,
    custody,
    version: backend.version,
    now,
    log,
  });
  // hop v2 for agents that register their key, while every upstream speaks it too (decision 495)
  backend.wire2 = new RelayWire2(
    wire2NodeId(cfg.name),
    tokens,
    key,
    () => peers.upstreamsSpeakWire2(),
    () => peers.upstreamsCarry(),
    () => peers.upstreamsPushForms(),
  );
  const logEvent = forwardEvents(metrics, log);
  // refused bundles go back to their agents as notices with the site's downlink (decision 240)
  const notices = new RefusalNotices(cfg.name);
  backend.refusalsFor = (site) => notices.for(site, now());
  const emit = (e: ForwardEvent) => {
    logEvent(e);
    if (e.type === 'refused') {
      // the sites' held pulls answer now, so their agents learn it at once, not at the end of a hold
      for (const site of notices.note(e, now())) backend.held.notify(site);
    }
    peers.note(e).catch((err) => log.warn({ err }, 'checking a refusal with upstream failed'));
  };
  // Dead buffers of the batches and blobs taken in or forwarded are freed now, not 64 MiB later.
  const relieve = memoryRelief({ gc: exposedGc() });
  const publicationCache = openCache(cfg.publications.quotaBytes);
  const loops = relayLoops(cfg, {
    custody,
    slots,
    upstreams,
    uploader,
    peers,
    backend,
    publicationCache,
    metrics,
    emit,
    relieve,
    now,
    random,
    log,
    ...(deps.transport ? { transport: deps.transport } : {}),
  });
  const { forwarding, pulling, watching, fetching, peering, fetcher } = loops;
  backend.onWork = () => {
    relieve();
    forwarding.kick();
  };
  return {
    hop,
    backend,
    custody,
    tokens,
    registry,
    publicationCache,
    /** What each upstream says this relay is, and its own health as sent upstream. */
    peers,
    /** The relay's own key (`ed25519:…`), as `relay key` prints it for `hub peer add NAME --key …`. */
    publicKey: key.publicKey,
    /** Listens and starts the loops. */
    async start(): Promise<{ url: string; port: number }> {
      const addr = await hop.listen(cfg.listen.port, cfg.listen.host);
      this.startLoops();
      log.info({ url: addr.url, upstreams: upstreams.map((u) => u.name) }, 'relay listening');
      return addr;
    },
    /** Starts the loops without listening (a deterministic world hands requests to `hop.server`). */
    startLoops(): void {
      if (slots.length === 0) return;
      peering.start();
      forwarding.start();
      pulling.start();
      watching.start();
      fetching.start();
    },
    /** Wakes the forwarder now (tests; a new bundle does it by itself). */
    poke: () => forwarding.kick(),
    async stop(): Promise<void> {
      const stopping = [forwarding.stop(), pulling.stop(), watching.stop(), fetching.stop(), peering.stop()];
      fetcher.abort();
      for (const h of http) h.client.abort();
      backend.held.releaseAll();
      await Promise.all([...stopping, hop.close()]);
      custody.close();
    },
  };
}
export type Relay = ReturnType<typeof createRelay>;
