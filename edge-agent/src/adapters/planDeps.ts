import { access, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { terraformPlatform } from '@driftline/protocol';
import type { AgentConfig } from '../config.js';
import type { RunPlanDeps } from '../core/plan/runPlan.js';
import type { Logger } from '../ports/Logger.js';
import { FsVarFiles } from './fs/FsVarFiles.js';
import { readModuleCalls, readModuleVariables } from './fs/moduleVariables.js';
import { loadSiteKey } from './fs/siteKey.js';
import { TmpScratchSpace } from './fs/TmpScratchSpace.js';
import { CliGitMirror } from './git/CliGitMirror.js';
import { CliGitProbe } from './git/CliGitProbe.js';
import { NodeProcessRunner } from './process/NodeProcessRunner.js';
import { lockFileNeeds } from './providers/providerSink.js';

/** Terraform's name for this machine's platform (`linux_amd64`). */
export const PLATFORM = terraformPlatform(process.platform, process.arch);

/**
 * What a plan run uses on this machine, for the daemon and `edge-agent plan` alike: processes, git
 * (probe and the site's mirrors), scratch space, var files, provider mirrors for the offline `init`,
 * the site key.
 */
export function planDeps(
  config: AgentConfig,
  log: Logger,
  now: () => number,
  /** The tool's base environment; `process.env` unless given. */
  baseEnv: Readonly<Record<string, string | undefined>> = process.env,
): RunPlanDeps & { mirror: CliGitMirror; providerMirrors: readonly string[] } {
  const providerMirrors = config.providerMirrors ?? [];
  return {
    mirror: new CliGitMirror(config.sources.dir ?? join(config.dataDir, 'git')),
    providers: lockFileNeeds(providerMirrors, PLATFORM),
    providerMirrors,
    writeFile: (path, text) => writeFile(path, text, { mode: 0o600 }),
    exists: (path) =>
      access(path).then(
        () => true,
        () => false,
      ),
    isDirectory: (path) =>
      stat(path).then(
        (st) => st.isDirectory(),
        () => false,
      ),
    proc: new NodeProcessRunner(),
    git: new CliGitProbe(),
    scratch: new TmpScratchSpace(),
    varFiles: new FsVarFiles(),
    clock: { now },
    baseEnv,
    log,
    // The plan hash is keyed with the site's own key (decision 200), made in the data dir on first use.
    siteKey: loadSiteKey(config.dataDir),
    moduleVariables: readModuleVariables,
    moduleCalls: readModuleCalls,
  };
}
