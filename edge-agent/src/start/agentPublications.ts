import type { HopTransport } from '@driftline/hop/client';
import type Database from 'better-sqlite3';
import { providerSink } from '../adapters/providers/providerSink.js';
import { FsPublicationFiles, partialDirOf } from '../adapters/publications/FsPublicationFiles.js';
import { SqlitePublicationLedger } from '../adapters/publications/SqlitePublicationLedger.js';
import { type RunningPublications, startPublications } from '../adapters/publications/startPublications.js';
import { releaseSink } from '../adapters/releases/releaseSink.js';
import { gitSink } from '../adapters/sources/gitSink.js';
import type { AgentConfig } from '../config.js';
import type { PlanCycle } from '../core/cycle/PlanCycle.js';
import type { AgentLedger } from '../core/ledger/AgentLedger.js';
import type { Logger } from '../ports/Logger.js';
import type { SourceMirror } from '../ports/SourceMirror.js';

/**
 * Publications in the daemon: their ledger in the agent's file, states into the agent's document, and
 * one sink per kind the site accepts: git bundles into the mirror, agent releases, provider builds.
 */
export function agentPublications(
  config: AgentConfig,
  deps: {
    db: Database.Database;
    store: AgentLedger;
    mirror: SourceMirror;
    cycle: PlanCycle;
    tokens: { url: string; token: string | (() => string); transport?: HopTransport }[];
    version: string;
    now: () => number;
    log: Logger;
  },
): RunningPublications {
  const { cycle } = deps;
  const providerDir = config.publications.accept['provider-mirror']?.dir;
  return startPublications(
    config,
    {
      ledger: new SqlitePublicationLedger(deps.db),
      onStates: (states) => deps.store.setPublicationStates(states),
    },
    deps.tokens,
    deps.now,
    deps.log,
    config.publications.retryMs,
    {
      git: gitSink(config, deps.mirror, (repo, updated) => cycle.headsArrived(repo, updated)),
      'agent-release': releaseSink({ config: config.releases, runningVersion: deps.version, log: deps.log }),
      ...(providerDir
        ? {
            'provider-mirror': providerSink(
              providerDir,
              new FsPublicationFiles(partialDirOf(config.dataDir)),
              (path) => cycle.providerArrived(path),
            ),
          }
        : {}),
    },
  );
}
