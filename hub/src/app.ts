import { join } from 'node:path';
import { createHopServer, type HopServer } from '@driftline/hop';
import { listenAs } from '@driftline/hop/config';
import { type HubEvent, type PlanRequest, WireError } from '@driftline/protocol';
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { DiskCap } from './adapters/fs/DiskCap.js';
import { FileBlobs } from './adapters/fs/FileBlobs.js';
import { loadOrCreateHubKey } from './adapters/fs/hubKey.js';
import { loadOrCreateSecret } from './adapters/fs/secretFile.js';
import { CustodyClocks, chainMessage, custodyChainCounter } from './adapters/hop/custodyClocks.js';
import { HubHopBackend } from './adapters/hop/HubHopBackend.js';
import { peerMayRead } from './adapters/hop/peerMayRead.js';
import { type ApiServer, createApiServer } from './adapters/http/apiServer.js';
import { HubAuth } from './adapters/http/auth.js';
import { HttpWebhookSender } from './adapters/http/HttpWebhookSender.js';
import { mountPeopleSide } from './adapters/http/peopleSide.js';
import { policyFor } from './adapters/http/policy.js';
import { storeErrorToWire } from './adapters/http/storeErrors.js';
import { openStores } from './adapters/openStores.js';
import { StoreRefusedError } from './adapters/postgres/errors.js';
import { PgEvents } from './adapters/postgres/PgEvents.js';
import { PgLeader } from './adapters/postgres/PgLeader.js';
import { DeliveryObserver } from './adapters/publish/DeliveryObserver.js';
import { Publisher } from './adapters/publish/Publisher.js';
import { MergePool } from './adapters/threads/MergePool.js';
import { type HubConfig, listenersOf } from './config.js';
import { contactPlanSettings } from './configContact.js';
import { Approvals } from './core/Approvals.js';
import { ContactPlans } from './core/contact/ContactPlans.js';
import { DocReplicas } from './core/DocReplicas.js';
import { EventLog } from './core/EventLog.js';
import { HeapHeadroom } from './core/HeapHeadroom.js';
import { Ingest } from './core/Ingest.js';
import { type Leadership, soleLeader } from './core/leader.js';
import { LiveEvents } from './core/liveEvents.js';
import { PlanRequests } from './core/PlanRequests.js';
import { Queries } from './core/Queries.js';
import { Sweeper } from './core/Sweeper.js';
import { sharedHealthCheck } from './core/storeHealth.js';
import { createHubMetrics } from './metrics.js';
import { type Clock, systemClock } from './ports/Clock.js';
import type { HubStore } from './ports/HubStore.js';
import { ulidGen } from './ports/IdGen.js';
import type { PublicationStore } from './ports/PublicationStore.js';
import type { WebhookSender } from './ports/WebhookSender.js';

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
  /** Starts the periodic sweep and webhook delivery (not started in tests, which call the sweeper). */
  startTimers(): void;
  close(): Promise<void>;
}

import { csrfKeyPath, keyPath } from './dataDir.js';

export { csrfKeyPath, keyPath, publicationStorePath, storePath } from './dataDir.js';

/** Wires the hub: store, key, core, hop server with /api, SSE, UI and metrics. */
export async function createHub(
  config: HubConfig,
  opts: { logger?: Logger; clock?: Clock; sender?: WebhookSender; store?: HubStore } = {},
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
  const blobs = new FileBlobs(join(config.dataDir, 'blobs'));
  const merger =
    config.ingest.mergeWorkers > 0
      ? new MergePool(config.ingest.mergeWorkers, (e) =>
          logger.error({ err: e }, 'a merge worker died; replaced'),
        )
      : undefined;
  // PostgreSQL may be down while the hub runs: /v1/health says so (asked at most once a second, down
  // after 3 s without an answer), in a fixed phrase; the error itself goes to the log.
  const storeHealth = postgres
    ? sharedHealthCheck(() => postgres.ping(), {
        ttlMs: 1000,
        timeoutMs: 3000,
        now: () => performance.now(),
        describe: (e) =>
          e instanceof StoreRefusedError
            ? 'the store refused this hub (see its log)'
            : 'the store is unavailable',
        onFailure: (err) => logger.warn({ err }, 'health check: the store did not answer'),
      })
    : undefined;
  // Other hub processes may share a PostgreSQL store: merges lock, events and the sweeps' leader go through it.
  const shared = postgres !== undefined;
  const replicas = new DocReplicas(store, {
    ...(merger ? { merger } : { headroom: new HeapHeadroom() }),
    shared,
  });
  const registry = new Registry();
  const metrics = createHubMetrics(registry, store);
  const ingest = new Ingest({
    store,
    clock,
    ids,
    replicas,
    hubPrivateKey: key.privateKey,
    webhookUrls: config.webhooks.urls,
    log: logger,
    count: { refused: (r) => metrics.refused(r), merged: metrics.merged, clockHeld: metrics.clockHeld },
  });
  const contactPlans = new ContactPlans(contactPlanSettings(config.contactPlans));
  const queries = new Queries(store, config.defaultContactIntervalS, publications, contactPlans);
  const events = new EventLog();
  const sharedEvents = postgres
    ? new PgEvents(postgres, events, { onError: (e, what) => logger.warn({ err: e }, what) })
    : null;
  const publish = (e: HubEvent) => (sharedEvents ? sharedEvents.publish(e) : events.publish(e));
  const planRequests = new PlanRequests({
    store,
    clock,
    ids,
    hubPrivateKey: key.privateKey,
    ttlS: config.planRequestTtlS,
    defaultContactIntervalS: config.defaultContactIntervalS,
  });
  const sweeper = new Sweeper({
    store,
    clock,
    contactPlans,
    webhookUrls: config.webhooks.urls,
    sender: opts.sender ?? new HttpWebhookSender(config.webhookSecret ?? ''),
    defaultContactIntervalS: config.defaultContactIntervalS,
    retention: {
      maxRunsPerCell: config.retention.maxRunsPerCell,
      maxAgeMs: config.retention.maxAgeDays * 86_400_000,
      failureMaxAgeMs: config.retention.failureMaxAgeDays * 86_400_000,
      refMaxAgeMs: config.retention.refRetentionDays * 86_400_000,
    },
    log: logger,
    countRefsExpired: metrics.refsExpired,
  });
  const live = new LiveEvents({
    publish,
    // Shared: a dashboard of another hub may be listening.
    listening: () => shared || events.listening,
    queries,
    now: () => clock.now(),
    defaultContactIntervalS: config.defaultContactIntervalS,
  });
  ingest.onCommitted((c) => {
    // Each commit that heard from a site is a contact its windows are learned from.
    for (const s of c.sites) contactPlans.record(s, clock.now());
    live.committed(c).catch((e) => logger.error({ err: e }, 'site event failed'));
  });
  const uploadsDir = join(config.dataDir, 'uploads');
  const disk = new DiskCap(config.dataDir, config.storage.maxBytes, uploadsDir, () => clock.now());
  // the signed per-hop timing chain, checked against the enrolled keys (decision 290)
  const chainOutcomes = custodyChainCounter(registry);
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
    ...(storeHealth ? { health: storeHealth } : {}),
    ingest,
    replicas,
    blobs,
    clock,
    version: HUB_VERSION,
    onDelivered: (rs) => {
      for (const r of rs) live.requestRow(r);
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
  const observed = new DeliveryObserver(backend, {
    ingest,
    publications,
    clock,
    onError: (e) => logger.error({ err: e }, 'recording publication delivery state failed'),
  });
  const csrfKey = await loadOrCreateSecret(csrfKeyPath(config.dataDir));
  const auth = new HubAuth({ store, clock, config: config.api, csrfKey, logger });
  const apiDeps = {
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
  const listeners = listenersOf(config);
  const split = !('shared' in listeners);
  const hop = createHopServer(observed, {
    uploads: {
      directory: uploadsDir,
      maxSize: config.limits.maxUploadBytes,
      admit: (_peer, size, reserved) => disk.check(size, reserved.total),
    },
    mapError: storeErrorToWire,
    maxBatchBytes: config.limits.maxBatchBytes,
    maxConnectionsPerClient: config.limits.maxConnectionsPerClient,
    headersTimeoutMs: config.limits.headersTimeoutMs,
    registry,
    logger,
    // Exchanges are stamped with the hub's clock: the one agents' offsets are estimated against.
    now: () => clock.now(),
    metrics: {
      authorize: split
        ? async () => {
            throw new WireError('not-found', '/metrics is served on the api listener (listen.api)');
          }
        : (ctx) => auth.check(ctx, policyFor('GET', '/metrics')),
    },
    ...(split ? {} : { extend: (app) => mountPeopleSide(app, people) }),
  });
  const api = split
    ? createApiServer(
        observed,
        logger,
        (app) => mountPeopleSide(app, { ...people, metricsRegistry: registry }),
        {
          maxConnectionsPerClient: config.limits.maxConnectionsPerClient,
          headersTimeoutMs: config.limits.headersTimeoutMs,
        },
      )
    : null;
  const timers: NodeJS.Timeout[] = [];
  const sweepOnce = async (prune: boolean) => {
    await live.swept(await sweeper.sweep({ prune }));
    // Requests the agent has not confirmed go down again (decision 230), logged and counted.
    for (const x of await planRequests.resendUnconfirmed()) {
      metrics.resent();
      live.requestRow(x, clock.now());
      logger.warn(
        {
          requestId: x.requestId,
          site: x.site,
          agent: x.agent,
          requestedAt: new Date(x.requestedAt).toISOString(),
        },
        "sent a plan request again: the agent's document does not say it arrived; if this repeats, check the relays on the site's path (GET /api/relays)",
      );
    }
    // Approvals the agent's record does not name go down again (decision 300), logged.
    for (const a of await apiDeps.approvals.resendUnconfirmed())
      logger.warn(
        {
          approvalId: a.approvalId,
          site: a.site,
          runId: a.runId,
          submittedAt: new Date(a.submittedAt).toISOString(),
        },
        "sent an approval again: the agent's record does not name it; if this repeats, check the relays on the site's path (GET /api/relays)",
      );
    await sweeper.deliverWebhooks();
  };
  let sweeps = 0;
  let sweeping = false;
  let leader: Leadership = soleLeader;
  return {
    hop,
    api,
    async listen() {
      if ('shared' in listeners) {
        const { url } = await listenAs('listen.port', listeners.shared, () =>
          hop.listen(listeners.shared.port, listeners.shared.host),
        );
        return { hop: url, api: url };
      }
      const h = await listenAs('listen.hop.port', listeners.hop, () =>
        hop.listen(listeners.hop.port, listeners.hop.host),
      );
      const a = await listenAs('listen.api.port', listeners.api, () =>
        (api as ApiServer).listen(listeners.api.port, listeners.api.host),
      );
      return { hop: h.url, api: a.url };
    },
    store,
    ingest,
    sweeper,
    events,
    publicKeyText: key.publicKeyText,
    publisher,
    publications,
    startTimers() {
      leader = postgres
        ? new PgLeader(postgres, {
            onChange: (leads, err) => {
              metrics.leads(leads);
              if (leads) logger.info('this hub leads now: it runs the sweeps and sends the webhooks');
              else logger.warn({ err }, 'this hub no longer leads; another hub on the database takes over');
            },
          })
        : soleLeader;
      metrics.leads(leader.isLeader());
      const t = setInterval(() => {
        if (sweeping || !leader.isLeader()) return;
        sweeping = true;
        sweepOnce(sweeps++ % 240 === 0)
          .catch((e) => logger.error({ err: e }, 'sweep failed'))
          .finally(() => {
            sweeping = false;
          });
      }, config.sweepIntervalS * 1000);
      t.unref();
      timers.push(t);
    },
    async close() {
      for (const t of timers) clearInterval(t);
      await leader.close();
      await sharedEvents?.close();
      await api?.close();
      await hop.close();
      await replicas.close();
      await publications.close();
      await store.close();
    },
  };
}
