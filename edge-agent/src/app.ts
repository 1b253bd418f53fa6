import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HopTransport } from '@driftline/hop/client';
import { takeDataDirLock } from '@driftline/hop/lock';
import { cryptoRandomBytes, monotonicUlid, publicKeyOf, publicKeyToText } from '@driftline/protocol';
import type { Logger } from 'pino';
import { loadAgentKey, loadHubKey } from './adapters/fs/agentKeys.js';
import { FsPlanFiles } from './adapters/fs/FsPlanFiles.js';
import { PLATFORM, planDeps } from './adapters/planDeps.js';
import { SqliteUrlStorage } from './adapters/tus/SqliteUrlStorage.js';
import type { AgentConfig } from './config.js';
import { ConfigProblem } from './configProblem.js';
import { ApplyCoordinator, hubKeyProblem } from './core/apply/ApplyCoordinator.js';
import { PlanCycle } from './core/cycle/PlanCycle.js';
import type { AgentLedger } from './core/ledger/AgentLedger.js';
import { cellsForNewHeads } from './core/plan/refPolicy.js';
import { runPlan } from './core/plan/runPlan.js';
import type { CellRef, CellScheduler, TriggerReason } from './core/schedule/CellScheduler.js';
import { HubWindowsHeld } from './core/sync/hubWindows.js';
import type { SyncLoop } from './core/sync/SyncLoop.js';
import type { AgentStorage } from './ports/AgentStorage.js';
import type { GitProbe } from './ports/PlanWorkspace.js';
import type { ProcessRunner } from './ports/ProcessRunner.js';
import { agentFacts, followReads, providerBuilds } from './start/agentFacts.js';
import { agentPublications } from './start/agentPublications.js';
import { agentRuns, startSchedules } from './start/agentRuns.js';
import { openAgentStore } from './start/agentStore.js';
import { agentSync } from './start/agentSync.js';
import { agentUplinks } from './start/agentUplinks.js';
import { logStartWarnings } from './start/startWarnings.js';

export { packDetail } from './core/cycle/packDetail.js';

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
  /** What carries every exchange with the upstreams (default: sockets; a deterministic world's links). */
  transport?: HopTransport;
  /** What runs terraform/tofu (default: child processes; in process and seeded in a deterministic world). */
  runner?: ProcessRunner;
  /** What reads a working directory's commit (default: the `git` program; in process in a world). */
  gitProbe?: GitProbe;
  /**
   * The sync loop's backoff jitter and the schedule's (default `Math.random`): a deterministic world gives
   * each its own stream of its seed, so neither hangs on the order the other drew in.
   */
  random?: { sync: () => number; schedule: () => number };
}

const timer = (ms: number, fn: () => void) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

/** Wires the agent daemon (`edge-agent run`) from its config; the plan-a-cell use case is `PlanCycle`. */
export async function startAgent(config: AgentConfig, opts: StartOptions): Promise<RunningAgent> {
  const now = opts.now ?? Date.now;
  const log = opts.log;
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // One agent per data directory (issue 42): a second would plan and record beside the first.
  const locked = takeDataDirLock(join(config.dataDir, 'agent.lock'), config.dataDir, 'edge-agent run');
  if (!locked.ok) throw new ConfigProblem(locked.message);
  const [privateKey, hubPublicKey] = await Promise.all([
    loadAgentKey(config.dataDir),
    loadHubKey(config.hubPublicKeyFile),
  ]).catch((e: unknown) => {
    locked.lock.release();
    throw e;
  });
  const { ledger: store, db } = openAgentStore(config, now);
  const { uplinks, tokens, wire2 } = agentUplinks(config, {
    urlStorage: new SqliteUrlStorage(db),
    now,
    log,
    privateKey,
    publicKey: await publicKeyToText(await publicKeyOf(privateKey)),
    heartbeatForm: (epoch, changes) => store.heartbeatForm(epoch, changes),
    ackLaterS: () => store.ackLaterS(),
    ...(opts.transport ? { transport: opts.transport } : {}),
  });
  const newId = monotonicUlid(now, cryptoRandomBytes);
  const hubKeyInApprovers = await hubKeyProblem(config, hubPublicKey);
  if (hubKeyInApprovers) {
    store.close();
    locked.lock.release();
    throw new ConfigProblem(hubKeyInApprovers);
  }
  const runDeps = planDeps(config, log, now, opts.toolEnv);
  if (opts.runner) runDeps.proc = opts.runner;
  if (opts.gitProbe) runDeps.git = opts.gitProbe;
  const planFiles = new FsPlanFiles(join(config.dataDir, 'plans'), 3, now);
  runDeps.planFiles = planFiles;
  const { mirror, providerMirrors } = runDeps;
  const trigger = (cell: CellRef, reason: TriggerReason) => scheduler.trigger(cell, reason);
  const applies = new ApplyCoordinator({
    site: config.site,
    config,
    store,
    planFiles,
    runDeps,
    now,
    log,
    trigger: (cell) => trigger(cell, 'apply'),
  });
  const { facts, repos } = agentFacts(config, AGENT_VERSION, PLATFORM);
  let loop: SyncLoop | undefined;
  const upstreamUrls = uplinks.map((u) => u.url);
  followReads(facts, wire2, upstreamUrls, () => {
    store.updateFacts(facts);
    loop?.kick();
  });
  // The windows the hub declared for the site, held across restarts (docs/decisions/590-windows-declared-once.md).
  const hubWindows = new HubWindowsHeld(store.storage, { site: config.site, agent: config.agent }, log);
  const held = hubWindows.windows();
  if (held.length > 0) facts.hubWindows = held;
  // The hub learns this agent's cells and cadences at once, before the first plan finishes.
  store.updateFacts(facts);
  const cycle = new PlanCycle({
    plan: (cell, options) => runPlan(cell.component, cell.environment, config, runDeps, options),
    applies,
    ledger: store,
    record: (input) => batcher.record(input),
    newId,
    trigger,
    kick: () => loop?.kick(),
    facts,
    repos,
    heads: (repo) => mirror.heads(repo),
    ...(providerMirrors.length > 0 ? { providerBuilds: () => providerBuilds(providerMirrors) } : {}),
    cellsForNewHeads: (repo, updated) =>
      config.sources.planNewHeads ? cellsForNewHeads(config, repo, updated) : [],
    log,
  });
  const { scheduler, batcher } = agentRuns(config, {
    store,
    runCell: (cell, reason) => cycle.runCell(cell, reason),
    setTimer: timer,
    ...(opts.random ? { random: opts.random.sync } : {}),
    log,
  });
  const publications = agentPublications(config, {
    db,
    store,
    mirror,
    cycle,
    tokens,
    version: AGENT_VERSION,
    now,
    log,
  });
  void cycle.refreshSources();
  const running = agentSync(config, {
    store,
    uplinks,
    ...(wire2 ? { wire2 } : {}),
    privateKey,
    hubPublicKey,
    scheduler,
    publications,
    applies,
    newId,
    now,
    setTimer: timer,
    ...(opts.random ? { random: opts.random.sync } : {}),
    log,
    onUploadProgress: opts.onUploadProgress,
    hubWindows,
    onHubWindows: (windows) => {
      // an empty list, not none: the document keeps a fact until it is written again
      facts.hubWindows = windows;
      store.updateFacts(facts);
    },
  });
  loop = running;
  running.start();
  applies.resume();
  logStartWarnings(config, runDeps.git, log);
  const stopCron = opts.schedule === false ? () => {} : startSchedules(config, scheduler);
  // `site` and `agent` are the daemon logger's bindings (edge-agent run): repeated here, they would
  // appear twice in the line.
  log.info({ upstreams: uplinks.map((u) => u.url), epoch: store.currentEpoch() }, 'agent started');
  return {
    store,
    storage: store.storage,
    scheduler,
    loop: running,
    trigger,
    stop: async () => {
      stopCron();
      await publications.stop();
      await scheduler.stop();
      batcher.flush();
      await running.stop();
      store.close();
      locked.lock.release();
      log.info({}, 'agent stopped');
    },
  };
}
