import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bearerToken, createHopServer, type HopServer } from '@driftline/hop';
import { WireError } from '@driftline/protocol';
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { RelayBackend } from './adapters/hop/RelayBackend.js';
import { HttpUpstream } from './adapters/http/HttpUpstream.js';
import { RangeFetcher } from './adapters/http/RangeFetcher.js';
import { SqliteBundleCache } from './adapters/sqlite/SqliteBundleCache.js';
import { SqliteCustody } from './adapters/sqlite/SqliteCustody.js';
import { SqliteTokens } from './adapters/sqlite/SqliteTokens.js';
import { TusBlobUploader } from './adapters/tus/TusBlobUploader.js';
import type { RelayConfig, ResolvedUpstream } from './config.js';
import { backoffDelay } from './core/backoff.js';
import { announcedBlobs, bundleFetchStep } from './core/bundles/bundleFetch.js';
import { contactState } from './core/contactPlan.js';
import { type ForwardEvent, forwardStep, type UpstreamSlot } from './core/Forwarder.js';
import { pullStep } from './core/pullStep.js';
import { createRelayMetrics } from './metrics.js';
import { type Clock, systemClock } from './ports/Clock.js';

export interface RelayDeps {
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
}

/** Opens the relay's store (also used by `relay token …` without starting a server). */
export function openStore(cfg: Pick<RelayConfig, 'dataDir' | 'storage'>, clock: Clock = systemClock) {
  mkdirSync(cfg.dataDir, { recursive: true });
  const custody = new SqliteCustody(join(cfg.dataDir, 'relay.sqlite'), { maxBytes: cfg.storage.maxBytes });
  return { custody, tokens: new SqliteTokens(custody.db, () => clock.now()) };
}

/** Wires a relay: hop server over SQLite custody, a forwarding loop and a downlink pull loop. */
export function createRelay(cfg: RelayConfig, upstreams: ResolvedUpstream[], deps: RelayDeps = {}) {
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? Math.random;
  const log = deps.logger ?? pino({ level: 'silent' });
  const { custody, tokens } = openStore(cfg, clock);
  const backend = new RelayBackend(cfg.name, custody, tokens, clock, cfg.dataDir, cfg.limits);
  const registry = new Registry();
  const hop: HopServer = createHopServer(backend, {
    uploads: {
      directory: join(cfg.dataDir, 'uploads'),
      maxSize: cfg.limits.maxUploadBytes,
      expirationMs: cfg.limits.uploadExpiryHours * 3_600_000,
      admit: (peer, size, reserved) => backend.admitUpload(peer, size, reserved),
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
    now: () => clock.now(),
  });
  backend.uploads = hop.uploads;
  const metrics = createRelayMetrics(registry, custody, clock, cfg.dataDir);
  backend.onRefused = (peer, reason, n) => {
    metrics.peerRefusals.inc({ peer, reason }, n);
    log.warn({ peer, reason, n }, 'refused a downstream peer');
  };
  const slots: UpstreamSlot[] = upstreams.map((u) => ({
    upstream: new HttpUpstream(
      u.name,
      u.url,
      u.token,
      cfg.forward.requestTimeoutMs,
      cfg.limits.maxResponseBytes,
      () => clock.now(),
    ),
    plan: u.plan,
    failures: 0,
    retryAt: 0,
  }));
  const uploader = new TusBlobUploader(
    new Map(upstreams.map((u) => [u.name, { url: u.url, token: u.token }])),
  );

  const emit = (e: ForwardEvent) => {
    if (e.type === 'forwarded') {
      metrics.forwards.inc({ upstream: e.upstream, result: 'ok' });
      metrics.bytesOut.inc({ upstream: e.upstream }, e.bytes);
      log.debug(e, 'forwarded');
    } else if (e.type === 'failed') {
      metrics.forwards.inc({ upstream: e.upstream, result: 'failed' });
      log.warn(e, 'forwarding failed; backing off');
    } else if (e.type === 'refused') {
      for (const r of e.receipts) metrics.refused.inc({ code: r.code ?? 'unknown' });
      log.error(
        { upstream: e.upstream, receipts: e.receipts },
        'upstream refused bundles for good; dropped and counted',
      );
    } else {
      metrics.expired.inc({ direction: e.direction, priority: e.priority });
      log.warn({ ...e, reason: 'lifetime ended before delivery' }, 'bundle expired; dropped and counted');
    }
  };

  let running = false;
  let wake: () => void = () => {};
  backend.onWork = () => wake();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        wake = () => {};
        resolve();
      }
      wake = done;
    });

  async function blobStep(): Promise<boolean> {
    for (const slot of slots) {
      if (slot.retryAt > clock.now() || !contactState(slot.plan, clock.now()).open) continue;
      const [blob] = custody.blobs.pending(slot.upstream.name, 1);
      if (!blob) return false;
      const r = await uploader.upload(slot.upstream.name, blob, (url) =>
        custody.blobs.setUploadUrl(blob.sha256, slot.upstream.name, url),
      );
      if (r.ok) {
        // Custody passes on: the file goes once the upstream has it (unless a cached bundle shares it).
        const done = custody.blobs.forwarded(blob.sha256);
        if (done) await rm(done, { force: true });
        metrics.bytesOut.inc({ upstream: slot.upstream.name }, blob.size);
        return true;
      }
      slot.failures++;
      const delay = backoffDelay(slot.failures, cfg.forward.backoffBaseMs, cfg.forward.backoffMaxMs, random);
      slot.retryAt = clock.now() + delay;
      emit({ type: 'failed', upstream: slot.upstream.name, reason: r.reason, retryInMs: delay });
    }
    return false;
  }

  async function forwardLoop(): Promise<void> {
    while (running) {
      try {
        const r = await forwardStep(custody, slots, cfg.forward, () => clock.now(), random, emit);
        if (r.sent > 0) continue;
        if (custody.nextBatch(clock.now(), 1, 1).length === 0 && (await blobStep())) continue;
        await sleep(r.waitMs);
      } catch (err) {
        log.error({ err }, 'forwarding step failed');
        await sleep(cfg.forward.idleMs);
      }
    }
  }

  // Bundles to outposts: one copy per blob, fetched with Range from the upstream, lowest priority.
  const bundleCache = new SqliteBundleCache(
    custody.db,
    cfg.bundles.quotaBytes,
    () => clock.now(),
    (name, by) =>
      custody.db
        .prepare(
          'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT DO UPDATE SET value = value + excluded.value',
        )
        .run(name, by),
  );
  const fetcher = new RangeFetcher(backend.blobDir, cfg.forward.requestTimeoutMs);
  const fetchUpstreams = upstreams.map((u, i) => ({ ...u, retryAt: () => slots[i]?.retryAt ?? 0 }));
  let bundleTimer: NodeJS.Timeout | undefined;
  let bundleRunning: Promise<void> | null = null;
  function bundleLoop(): Promise<void> {
    if (!running || bundleRunning) return bundleRunning ?? Promise.resolve();
    bundleRunning = bundleRun();
    return bundleRunning;
  }
  async function bundleRun(): Promise<void> {
    if (bundleTimer) clearTimeout(bundleTimer);
    try {
      for (let i = 0; i < 10_000 && running; i++) {
        const moved = await bundleFetchStep({
          cache: bundleCache,
          fetcher,
          upstreams: fetchUpstreams,
          now: () => clock.now(),
          uplinkBusy: () => custody.nextBatch(clock.now(), 1, 1).length > 0,
          chunkBytes: cfg.bundles.chunkBytes,
          emit: (e) => {
            if (e.type === 'failed') log.warn(e, 'bundle fetch interrupted; resumes from the partial file');
            else if (e.type === 'refused') log.error(e, 'bundle refused');
            else if (e.type === 'held') log.info(e, 'bundle held for downstream sites');
          },
        });
        if (!moved) break;
      }
    } catch (err) {
      log.error({ err }, 'bundle fetch step failed');
    }
    bundleRunning = null;
    if (running) bundleTimer = setTimeout(() => void bundleLoop(), cfg.bundles.intervalMs);
  }

  let pullTimer: NodeJS.Timeout | undefined;
  async function pullLoop(): Promise<void> {
    if (!running) return;
    try {
      await pullStep(
        custody,
        slots,
        cfg.sites,
        () => clock.now(),
        { pageSize: 200, maxPages: 10 },
        (u, s, reason) => log.warn({ upstream: u, site: s, reason }, 'downlink pull failed'),
        (site, items) => {
          const blobs = announcedBlobs(site, items);
          if (blobs.length === 0) return;
          bundleCache.note(blobs);
          void bundleLoop();
        },
      );
    } catch (err) {
      log.error({ err }, 'downlink pull failed');
    }
    if (running) pullTimer = setTimeout(pullLoop, cfg.forward.pullIntervalMs);
  }

  let loop: Promise<void> | undefined;
  return {
    hop,
    backend,
    custody,
    tokens,
    registry,
    bundleCache,
    /** Listens and starts the loops. */
    async start(): Promise<{ url: string; port: number }> {
      const addr = await hop.listen(cfg.listen.port, cfg.listen.host);
      running = true;
      if (slots.length > 0) {
        loop = forwardLoop();
        void pullLoop();
        void bundleLoop();
      }
      log.info({ url: addr.url, upstreams: upstreams.map((u) => u.name) }, 'relay listening');
      return addr;
    },
    /** Wakes the forwarder now (tests; a new bundle does it by itself). */
    poke: () => wake(),
    async stop(): Promise<void> {
      running = false;
      wake();
      if (pullTimer) clearTimeout(pullTimer);
      if (bundleTimer) clearTimeout(bundleTimer);
      fetcher.abort();
      await bundleRunning;
      await hop.close();
      await loop;
      custody.close();
    },
  };
}
export type Relay = ReturnType<typeof createRelay>;
