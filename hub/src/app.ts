import { join } from 'node:path';
import type { HopServer } from '@driftline/hop';
import type { HubEvent, PlanRequest } from '@driftline/protocol';
import pino, { type Logger } from 'pino';
import { Gauge, Registry } from 'prom-client';
import { FileBlobs } from './adapters/fs/FileBlobs.js';
import { loadOrCreateHubKey } from './adapters/fs/hubKey.js';
import { loadOrCreateSecret } from './adapters/fs/secretFile.js';
import type { ApiServer } from './adapters/http/apiServer.js';
import { HubAuth } from './adapters/http/auth.js';
import { openDriftStore, openStores } from './adapters/openStores.js';
import { PgEvents } from './adapters/postgres/PgEvents.js';
import { PgListener } from './adapters/postgres/PgListener.js';
import { Publisher } from './adapters/publish/Publisher.js';
import type { HubConfig } from './config.js';
import { Approvals } from './core/Approvals.js';
import type { DownlinkBell } from './core/downlinkBell.js';
import { Drift } from './core/drift/Drift.js';
import { fleetNotices } from './core/drift/fleetNotices.js';
import { EventLog } from './core/EventLog.js';
import type { Ingest } from './core/Ingest.js';
import type { PlanRequests } from './core/PlanRequests.js';
import { PublicationResends } from './core/publish/PublicationResends.js';
import type { Sweeper } from './core/Sweeper.js';
import { registerDriftGauges } from './driftMetrics.js';
import { type HubMemory, hubMemory, registerMemoryGauges } from './memoryMetrics.js';
import { createHubMetrics } from './metrics.js';
import { type Clock, systemClock } from './ports/Clock.js';
import type { DriftStore } from './ports/DriftStore.js';
import type { HubStore } from './ports/HubStore.js';
import { ulidGen } from './ports/IdGen.js';
import type { PublicationStore } from './ports/PublicationStore.js';
import type { WebhookSender } from './ports/WebhookSender.js';
import { hubDownlinkBell } from './start/downlinkBell.js';
import { hubHopBackend } from './start/hopBackend.js';
import { hubCore } from './start/hubCore.js';
import { listenHub } from './start/listen.js';
import { importLocalWaiversAtStart } from './start/localWaivers.js';
import { hubReplicas } from './start/replicas.js';
import { hubServers } from './start/servers.js';
import { hubSweeps } from './start/sweeps.js';

export const HUB_VERSION = '0.1.0';

export interface Hub {
  /** The hop API server; with one listener (`listen: { host, port }`) it serves the people's side too. */
  hop: HopServer;
  /** The people's side's own server when `listen.api` is set apart from `listen.hop`, else null. */
  api: ApiServer | null;
  /** Listens where the configuration says; resolves with the base URL of each side (equal when shared). */
  listen(): Promise<{ hop: string; api: string }>;
  store: HubStore;
  ingest: Ingest;
  sweeper: Sweeper;
  events: EventLog;
  publicKeyText: string;
  /** Publications: publish files to sites, read their delivery state. */
  publisher: Publisher;
  publications: PublicationStore;
  /** Drift episodes, groups and waivers (decision 421). */
  drift: Drift;
  /** Plan requests, as `POST /api/plan-requests` makes them (a deterministic world's operator too). */
  planRequests: PlanRequests;
  /** Where the hub's memory is now: main thread and merge workers (also `hub_memory_bytes` on /metrics). */
  memory(): Promise<HubMemory>;
  /** Starts the periodic sweep and webhook delivery (not started in tests, which call the sweeper). */
  startTimers(): void;
  /** One sweep now, as the timer runs it (its live events included), whether or not the timers run. */
  sweepOnce(): Promise<void>;
  close(): Promise<void>;
}

import { csrfKeyPath, keyPath } from './dataDir.js';

export { csrfKeyPath, keyPath, publicationStorePath, storePath } from './dataDir.js';

/** Wires the hub: store, key, core, hop server with /api, SSE, UI and metrics. */
export async function createHub(
  config: HubConfig,
  opts: {
    logger?: Logger;
    clock?: Clock;
    sender?: WebhookSender;
    store?: HubStore;
    /** Replaces the drift store (`drift.db` in the data directory, or the PostgreSQL store's database). */
    driftStore?: DriftStore;
    /**
     * How often the tokens behind open held pulls and uploads are checked again, ms (default 1000,
     * decision 411). A world that revokes nothing looks less often: the look is an event of its clock.
     */
    revocationCheckMs?: number;
    /** Replaces the bell of the relays' downlink watches (a test that waits until one is held). */
    bell?: DownlinkBell;
    /**
     * On a shared database, how often a held watch reads the store again, ms (default `SHARED_RECHECK_MS`;
     * a test of the notifications sets it beyond its reach, decision 635).
     */
    watchRecheckMs?: number;
  } = {},
): Promise<Hub> {
  const logger = opts.logger ?? pino({ level: 'silent' });
  const clock = opts.clock ?? systemClock;
  const ids = ulidGen(clock);
  const key = await loadOrCreateHubKey(keyPath(config.dataDir));
  const { store, publications, postgres } = await openStores(config, {
    ...(opts.store ? { store: opts.store } : {}),
    onUnavailable: (e) => logger.warn({ err: e }, 'the store is unreachable; answering 503 until it is back'),
    onIdleError: (e) => logger.warn({ err: e }, 'a store connection broke; it is replaced on next use'),
  });
  // one connection of this hub LISTENs, for live events and the downlink bell (decisions 160, 635)
  const listener = postgres ? new PgListener(postgres) : undefined;
  // every commit that writes downlink wakes the relays' watches over those sites, at every hub of a
  // shared database (decisions 620, 635)
  const downlink = hubDownlinkBell(store, postgres, logger, opts.bell, listener);
  const { bell } = downlink;
  const blobs = new FileBlobs(join(config.dataDir, 'blobs'));
  const { replicas, storeHealth, shared } = hubReplicas(config, { store, publications, postgres }, logger);
  const registry = new Registry();
  const metrics = createHubMetrics(registry, store);
  const events = new EventLog();
  const sharedEvents = postgres
    ? new PgEvents(postgres, events, { listener, onError: (e, what) => logger.warn({ err: e }, what) })
    : null;
  const { ingest, queries, planRequests, hubWindows, sweeper, live, judge } = hubCore(config, {
    store,
    publications,
    replicas,
    hubPrivateKey: key.privateKey,
    clock,
    ids,
    logger,
    metrics,
    ...(opts.sender ? { sender: opts.sender } : {}),
    publish: (e: HubEvent) => (sharedEvents ? sharedEvents.publish(e) : events.publish(e)),
    // Shared: a dashboard of another hub may be listening.
    listening: () => shared || events.listening,
  });
  // On PostgreSQL, in the database every hub shares (decision 470).
  const driftStore = opts.driftStore ?? openDriftStore(config, postgres);
  if (postgres && !opts.driftStore) await importLocalWaiversAtStart(config.dataDir, driftStore, logger);
  const drift = new Drift({
    drift: driftStore,
    commit: (w) => store.commit(w),
    clock,
    ids,
    webhookUrls: config.webhooks.urls,
  });
  // Episodes advance from what each committed batch brought (decision 421).
  ingest.onCommitted((c) => {
    if (c.runs.length > 0 || c.cells.length > 0)
      drift
        .observe(c.runs, c.cells)
        .catch((e) => logger.warn({ err: e }, 'drift episodes were not advanced'));
  });
  queries.waivedCells = (now) => drift.waivedCells(now);
  registerDriftGauges(registry, drift, queries, clock);
  const memory = hubMemory(() => replicas.mergerMemory());
  registerMemoryGauges(registry, memory);
  new Gauge({
    name: 'hub_acks_held',
    help: "Acks of hop v2 pushes held for the agent's next push, now (decision 525)",
    registers: [registry],
    collect() {
      this.set(ingest.heldAcks.size);
    },
  });
  new Gauge({
    name: 'hub_downlink_watches',
    help: "Relays' downlink watches held open now (decision 620)",
    registers: [registry],
    collect() {
      this.set(bell.size);
    },
  });
  const hopSide = hubHopBackend(config, {
    store,
    publications,
    ...(storeHealth ? { health: storeHealth } : {}),
    ingest,
    replicas,
    blobs,
    clock,
    version: HUB_VERSION,
    live,
    metrics,
    registry,
    logger,
    hubPrivateKey: key.privateKey,
    bell,
    shared,
    ...(opts.watchRecheckMs ? { watchRecheckMs: opts.watchRecheckMs } : {}),
  });
  const publisher = new Publisher({
    store,
    publications,
    blobs,
    tmpDir: join(config.dataDir, 'publish-tmp'),
    hubPrivateKey: key.privateKey,
    clock,
    ids,
    maxBytes: config.api.maxUploadBytes,
  });
  const csrfKey = await loadOrCreateSecret(csrfKeyPath(config.dataDir));
  const auth = new HubAuth({ store, clock, config: config.api, csrfKey, logger });
  const publicationResends = new PublicationResends({
    store,
    publications,
    clock,
    ids,
    hubPrivateKey: key.privateKey,
    defaultContactIntervalS: config.defaultContactIntervalS,
  });
  const apiDeps = {
    drift,
    publicationResends,
    store,
    queries,
    planRequests,
    events,
    blobs,
    clock,
    version: HUB_VERSION,
    logger,
    onPlanRequest: (r: PlanRequest) => live.request(r),
    publications,
    publisher,
    maxUploadBytes: config.api.maxUploadBytes,
    approvals: new Approvals({
      store,
      clock,
      ids,
      hubPrivateKey: key.privateKey,
      hubPublicKeyText: key.publicKeyText,
      defaultContactIntervalS: config.defaultContactIntervalS,
    }),
  };
  const people = { auth, store, clock, config: config.api, csrfKey, api: apiDeps, uiDir: config.uiDir };
  const servers = {
    ...hopSide,
    registry,
    logger,
    clock,
    auth,
    people,
    ...(opts.revocationCheckMs ? { revocationCheckMs: opts.revocationCheckMs } : {}),
  };
  const { hop, api, listeners } = hubServers(config, servers);
  const sweeps = hubSweeps({
    sweeper,
    live,
    judge,
    planRequests,
    hubWindows,
    approvals: apiDeps.approvals,
    publicationResends,
    metrics,
    clock,
    logger,
    ...(postgres ? { postgres } : {}),
    sweepIntervalS: config.sweepIntervalS,
    notices: () => fleetNotices({ queries, store, clock, drift }),
  });
  return {
    hop,
    api,
    listen: () => listenHub(listeners, hop, api),
    store,
    ingest,
    sweeper,
    events,
    publicKeyText: key.publicKeyText,
    publisher,
    publications,
    drift,
    planRequests,
    memory,
    startTimers: () => sweeps.start(),
    sweepOnce: () => sweeps.sweepOnce(),
    async close() {
      await sweeps.close();
      await sharedEvents?.close();
      await api?.close();
      await hop.close();
      await ingest.close(); // the acks it held for agents' next pushes go now (decision 525)
      await downlink.close(); // after them: other hubs are told of those acks
      await listener?.close();
      await replicas.close();
      await publications.close();
      await driftStore.close();
      await store.close();
    },
  };
}
