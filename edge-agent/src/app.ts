import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { tokenFromFile } from '@driftline/hop/client';
import { cellKey, cryptoRandomBytes, monotonicUlid, PLAN_DETAIL_CONTENT_TYPE } from '@driftline/protocol';
import type { Logger } from 'pino';
import { cadences, scheduleCells } from './adapters/cron/cronCells.js';
import { loadAgentKey, loadHubKey, readToken } from './adapters/fs/agentKeys.js';
import { FsPlanFiles } from './adapters/fs/FsPlanFiles.js';
import { HttpUplink } from './adapters/http/HttpUplink.js';
import { PLATFORM, planDeps } from './adapters/planDeps.js';
import { scanMirror } from './adapters/providers/mirror.js';
import { providerSink } from './adapters/providers/providerSink.js';
import { FsPublicationFiles, partialDirOf } from './adapters/publications/FsPublicationFiles.js';
import { SqlitePublicationLedger } from './adapters/publications/SqlitePublicationLedger.js';
import { startPublications } from './adapters/publications/startPublications.js';
import { releaseSink } from './adapters/releases/releaseSink.js';
import { gitSink } from './adapters/sources/gitSink.js';
import { openSqliteLedger } from './adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from './adapters/tus/SqliteUrlStorage.js';
import { type AgentConfig, configWarnings } from './config.js';
import { ApplyCoordinator, hubKeyProblem } from './core/apply/ApplyCoordinator.js';
import { applyCheckoutWarnings } from './core/apply/applyCheckouts.js';
import type { AgentLedger } from './core/ledger/AgentLedger.js';
import { allowsRef, cellRefOf, cellsForNewHeads, refFacts } from './core/plan/refPolicy.js';
import { findTarget, runPlan } from './core/plan/runPlan.js';
import { RecordBatcher } from './core/record/RecordBatcher.js';
import { type CellRef, CellScheduler, type TriggerReason } from './core/schedule/CellScheduler.js';
import { SyncEngine } from './core/sync/SyncEngine.js';
import { SyncLoop } from './core/sync/SyncLoop.js';
import type { AgentStorage } from './ports/AgentStorage.js';

export const AGENT_VERSION = '0.1.0';

export interface RunningAgent {
  /** The agent's ledger (record, push, ack, prune, epochs) over its storage. */
  store: AgentLedger;
  /** What the ledger keeps its rows in (tests read runs from it). */
  storage: AgentStorage;
  scheduler: CellScheduler;
  loop: SyncLoop;
  /** Runs one cell now (as a hub plan request or `--once` would). */
  trigger(cell: CellRef, reason: TriggerReason): void;
  /** Finishes or aborts current runs, flushes, closes the store. */
  stop(): Promise<void>;
}

export interface StartOptions {
  log: Logger;
  /** Start the cron schedules (false: only plan requests and explicit triggers run plans). */
  schedule?: boolean;
  now?: () => number;
  onUploadProgress?(sha256: string, sent: number, total: number): void;
  /** The plan and apply tools' base environment (default `process.env`). */
  toolEnv?: Readonly<Record<string, string | undefined>>;
}

const timer = (ms: number, fn: () => void) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

/** Packs a redacted detail as a content-addressed blob: brotli, sha256 of the compressed bytes. */
export function packDetail(canonical: string) {
  const bytes = brotliCompressSync(Buffer.from(canonical), { params: { [zlib.BROTLI_PARAM_QUALITY]: 9 } });
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    contentType: PLAN_DETAIL_CONTENT_TYPE,
  };
}

/** Wires the agent daemon (`edge-agent run`) from its config. */
export async function startAgent(config: AgentConfig, opts: StartOptions): Promise<RunningAgent> {
  const now = opts.now ?? Date.now;
  const log = opts.log;
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const [privateKey, hubPublicKey] = await Promise.all([
    loadAgentKey(config.dataDir),
    loadHubKey(config.hubPublicKeyFile),
  ]);
  const { ledger: store, db } = openSqliteLedger({
    path: join(config.dataDir, 'agent.sqlite'),
    site: config.site,
    agent: config.agent,
    maxDocBytes: config.sync.maxDocBytes,
    maxDocChanges: config.sync.maxDocChanges,
    maxQueueBytes: config.sync.maxQueueBytes,
    resendAfterMs: config.sync.resendAfterS * 1000,
    rejectedRetryMs: config.sync.rejectedRetryS * 1000,
    now,
  });
  const urlStorage = new SqliteUrlStorage(db);
  // Each upstream's token file is read again when it changes (a rotated token), logged once: no
  // restart (decision 240). Pushes, pulls and publication downloads use the same source.
  const tokens = config.upstreams.map((u) =>
    tokenFromFile(u.tokenFile, {
      initial: readToken(u.tokenFile),
      onChange: (path) =>
        log.info({ upstream: u.url, tokenFile: path }, 'token file changed; using the new token'),
      onProblem: (path, problem) => log.warn({ upstream: u.url, tokenFile: path }, `token file: ${problem}`),
    }),
  );
  const uplinkTokens = (c: AgentConfig) =>
    c.upstreams.map((u, i) => ({ url: u.url, token: tokens[i] ?? readToken(u.tokenFile) }));
  const uplinks = config.upstreams.map(
    (u, i) =>
      new HttpUplink({
        url: u.url,
        token: tokens[i] ?? readToken(u.tokenFile),
        urlStorage,
        // Exchanges are timed with the agent's clock port, the one its results are stamped with.
        now,
        source: `${config.site}/${config.agent}`,
        trustedClock: config.clock === 'trusted',
      }),
  );
  const newId = monotonicUlid(now, cryptoRandomBytes);
  const cadenceS = cadences(config);
  const contactIntervalS =
    config.sync.contactIntervalS ??
    2 * (Math.min(...Object.values(cadenceS)) + config.sync.jitterS) + config.sync.intervalS;
  const hubKeyInApprovers = await hubKeyProblem(config, hubPublicKey);
  if (hubKeyInApprovers) {
    store.close();
    throw new Error(hubKeyInApprovers);
  }
  const runDeps = planDeps(config, log, now, opts.toolEnv);
  runDeps.planFiles = new FsPlanFiles(join(config.dataDir, 'plans'), 3, now);
  const applies: ApplyCoordinator = new ApplyCoordinator({
    site: config.site,
    config,
    store,
    planFiles: runDeps.planFiles,
    runDeps,
    now,
    log,
    trigger: (cell) => scheduler.trigger(cell, 'apply'),
  });
  const { mirror, providerMirrors } = runDeps;
  const platform = PLATFORM;

  const refs = refFacts(config);
  const repos = [...new Set(config.components.flatMap((c) => (c.source ? [c.source.repo] : [])))];
  const facts: Parameters<typeof store.updateFacts>[0] = {
    version: AGENT_VERSION,
    cadenceS,
    contactIntervalS,
    contactWindows: config.sync.contactWindows,
    upstream: config.upstreams[0]?.url,
    platform,
    ...(repos.length > 0 ? { refs } : {}),
  };
  /**
   * Heads of the site's mirrors and the provider builds it holds, into the facts: a publisher sends only
   * what the site lacks.
   */
  const refreshSources = async () => {
    if (repos.length === 0 && providerMirrors.length === 0) return;
    const sources: Record<string, Record<string, string>> = {};
    for (const r of repos) sources[r] = await mirror.heads(r);
    if (repos.length > 0) facts.sources = sources;
    if (providerMirrors.length > 0)
      facts.providers = (await scanMirror([...providerMirrors], { maxEntries: 20_000 })).builds
        .map((b) => b.build)
        .slice(0, 5000);
    store.updateFacts(facts);
    loop?.kick();
  };
  /** Cells whose last plan was blocked for want of a provider: planned again when one arrives (not kept across restarts). */
  const blockedOnProviders = new Map<string, CellRef>();
  // The hub learns this agent's cells and cadences at once, before the first plan finishes.
  store.updateFacts(facts);

  let loop: SyncLoop;
  const batcher: RecordBatcher = new RecordBatcher({
    recordMany: (inputs) => store.recordMany(inputs),
    setTimer: timer,
    windowMs: config.sync.recordWindowS * 1000,
    // A cron tick of every cell fits in one commit; more waits for the next.
    maxBatch: 256,
    // A plan still running (not just waiting for this commit) or queued may finish soon.
    moreComing: (): boolean => scheduler.queued > 0 || scheduler.busy > batcher.waiting,
  });
  const scheduler = new CellScheduler({
    maxParallel: config.sync.maxParallelRuns,
    random: Math.random,
    setTimer: timer,
    onError: (cell, e) => log.error({ ...cell, err: (e as Error).message }, 'plan run failed unexpectedly'),
    runCell: async (cell, reason) => {
      // An approved plan of this cell waiting for its slot is applied first; the plan then shows the result.
      const applied = await applies.applyFirst(cell);
      const lockedStreak = store.lockedStreak(cell.environment, cell.component, cell.ref);
      const r = await runPlan(cell.component, cell.environment, config, runDeps, {
        lockedStreak,
        source: { ref: cell.ref, commit: cell.commit },
        keepPlanFile: applies.keepsPlanFile(cell),
      });
      const runId = newId();
      const canonical = r.summary.status !== 'redaction-failed' ? r.canonical : undefined;
      const recorded = await batcher.record({
        runId,
        summary: r.summary,
        detail: canonical ? () => packDetail(canonical) : undefined,
        lockedStreak: r.lockedStreak,
        ...(cell.ref ? { cellRef: cell.ref } : {}),
        mayConfirm: (shown) => applies.mayConfirm(cell, shown),
        facts,
      });
      log.info({ ...cell, runId, reason, status: r.summary.status, ...recorded }, 'result recorded');
      // The plan file is kept under the run's id before the result goes up (an approval names it);
      // a failure to keep it must not hold the result back.
      await applies
        .planRecorded(cell, runId, r, recorded.unchanged, applied)
        .catch((e: unknown) =>
          log.warn({ ...cell, runId, err: (e as Error).message }, 'keeping the plan file failed'),
        );
      loop.kick();
      const blockedKey = cellKey(cell.environment, cell.component, cell.ref);
      if (r.summary.status === 'blocked' && r.summary.reason === 'providers-missing')
        blockedOnProviders.set(blockedKey, {
          ...cell,
          ...(r.summary.git ? { commit: r.summary.git.commit } : {}),
        });
      else blockedOnProviders.delete(blockedKey);
    },
  });

  const onHeads = (repo: string, updated: Record<string, string>) => {
    log.info({ repo, updated }, 'git bundle fetched into the mirror');
    void refreshSources();
    if (config.sources.planNewHeads)
      for (const cell of cellsForNewHeads(config, repo, updated)) scheduler.trigger(cell, 'source');
  };
  const onProvider = (path: string) => {
    log.info({ path }, 'provider build placed in the mirror');
    void refreshSources();
    for (const cell of blockedOnProviders.values()) scheduler.trigger(cell, 'source');
  };
  const providerDir = config.publications.accept['provider-mirror']?.dir;
  const publicationLedger = new SqlitePublicationLedger(db);
  const publications = startPublications(
    config,
    { ledger: publicationLedger, onStates: (states) => store.setPublicationStates(states) },
    uplinkTokens(config),
    now,
    log,
    config.publications.retryMs,
    {
      git: gitSink(config, mirror, onHeads),
      'agent-release': releaseSink({ config: config.releases, runningVersion: AGENT_VERSION, log }),
      ...(providerDir
        ? {
            'provider-mirror': providerSink(
              providerDir,
              new FsPublicationFiles(partialDirOf(config.dataDir)),
              onProvider,
            ),
          }
        : {}),
    },
  );
  void refreshSources();
  const engine = new SyncEngine({
    site: config.site,
    agent: config.agent,
    store,
    uplinks,
    privateKey,
    hubPublicKey,
    allowsCell: (environment, component, ref) =>
      findTarget(config, component, environment) !== undefined &&
      allowsRef(config, environment, component, ref),
    onPlanRequest: (req) => {
      const ref = cellRefOf(findTarget(config, req.component, req.environment)?.component, req.ref);
      scheduler.trigger(
        {
          component: req.component,
          environment: req.environment,
          ...(ref ? { ref } : {}),
          ...(req.commit ? { commit: req.commit } : {}),
        },
        'request',
      );
    },
    newBundleId: newId,
    now,
    lifetimeS: config.sync.bundleLifetimeS,
    log,
    onBlobManifest: (m) => publications.announce(m),
    onApproval: (a) => applies.receive(a),
  });
  loop = new SyncLoop({
    engine,
    intervalMs: config.sync.intervalS * 1000,
    holdS: config.sync.downlinkHoldS,
    backoffBaseMs: config.sync.backoffBaseS * 1000,
    backoffCapMs: config.sync.backoffCapS * 1000,
    setTimer: timer,
    random: Math.random,
    log,
    onUploadProgress: opts.onUploadProgress,
  });
  const stopCron =
    opts.schedule === false
      ? () => {}
      : scheduleCells(config, (cell) => scheduler.trigger(cell, 'schedule', config.sync.jitterS * 1000));
  loop.start();
  applies.resume();
  for (const w of configWarnings(config)) log.warn({}, w);
  void applyCheckoutWarnings(config, runDeps.git).then((ws) => {
    for (const w of ws) log.warn({}, w);
  });
  // A new agent shows its first results within a minute rather than at the next cron firing; the
  // scheduler runs them `maxParallelRuns` at a time, like any other firing.
  if (opts.schedule !== false && config.sync.planOnStart)
    for (const c of config.components)
      for (const e of c.environments)
        scheduler.trigger({ component: c.name, environment: e.name }, 'schedule');
  // `site` and `agent` are the daemon logger's bindings (edge-agent run): repeated here, they would
  // appear twice in the line.
  log.info({ upstreams: uplinks.map((u) => u.url), epoch: store.currentEpoch() }, 'agent started');

  return {
    store,
    storage: store.storage,
    scheduler,
    loop,
    trigger: (cell, reason) => scheduler.trigger(cell, reason),
    stop: async () => {
      stopCron();
      await publications.stop();
      await scheduler.stop();
      batcher.flush();
      await loop.stop();
      store.close();
      log.info({}, 'agent stopped');
    },
  };
}
