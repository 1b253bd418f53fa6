import type { ProcessResult } from '../../ports/ProcessRunner.js';
import type { VarFiles } from '../../ports/VarFiles.js';
import type { DeclaredVariable } from '../redact/declaredVariables.js';
import { maskMode } from '../redact/maskValues.js';
import { compileRules, type SecretRule } from '../redact/rules.js';
import type { SecretValue } from '../redact/scan.js';
import type { PlanSettings } from '../settings.js';
import type { ToolOutput } from './excerpt.js';
import { knownValues } from './knownValues.js';
import type { ModuleCall } from './moduleCalls.js';
import { initModuleNeeds } from './moduleNeeds.js';
import type { PlanTarget } from './planTarget.js';
import { initArgs, initNeeds, offlineCliConfig, type ProviderNeeds } from './prepareSource.js';
import { failureReason } from './toolArgs.js';

/** What every run of the tool in one cell starts from (plan and apply alike). */
export interface ToolSetup {
  /** The tool's environment: the agent's own, then the component's and environment's `env`, TF_WORKSPACE. */
  env: Record<string, string>;
  /** The config's extra secret shapes, compiled. */
  rules: readonly SecretRule[];
  /** Values the agent hands the tool, which must never leave the site whatever the tool prints. */
  secrets: SecretValue[];
  /** `-var-file`s to pass (none for a `command` override). */
  passedVarFiles: readonly string[];
}

/** The environment, secret values and var files of one cell's run in `dir`. */
export async function toolSetup(
  t: PlanTarget,
  config: PlanSettings,
  deps: {
    baseEnv: Readonly<Record<string, string | undefined>>;
    varFiles?: VarFiles;
    moduleVariables?(dir: string, maxBytes: number): Promise<DeclaredVariable[]>;
  },
  dir: string,
): Promise<ToolSetup> {
  const c = t.component;
  const rules = compileRules(config.redaction.patterns);
  const configuredEnv: Record<string, string> = { ...c.env, ...(t.environment.env ?? {}) };
  const env: Record<string, string> = { TF_IN_AUTOMATION: '1', TF_INPUT: '0' };
  for (const [k, v] of Object.entries(deps.baseEnv)) if (v !== undefined) env[k] = v;
  Object.assign(env, configuredEnv);
  if (t.environment.workspace) env.TF_WORKSPACE = t.environment.workspace;
  // A command override is handed no -var-file, but the files the config lists are still known values.
  const configuredVarFiles = t.environment.varFiles ?? [];
  const passedVarFiles = c.command ? [] : configuredVarFiles;
  const varFiles = deps.varFiles
    ? await deps.varFiles.read(dir, configuredVarFiles, config.limits.maxLogBytes).catch(() => [])
    : [];
  const secrets = knownValues({ baseEnv: deps.baseEnv, configuredEnv, varFiles });
  // Declared defaults too: a failed plan has no plan JSON, and its output can still carry them
  // (decision 210). Public variables' defaults may appear as they are; short ones (`main`, `error`)
  // would withhold excerpts for ordinary words, so only those masked anywhere count.
  const declared = deps.moduleVariables
    ? await deps.moduleVariables(dir, config.limits.maxLogBytes).catch(() => [])
    : [];
  const open = new Set(config.redaction.publicVariables);
  for (const v of declared) {
    if (open.has(v.name)) continue;
    for (const value of v.defaults)
      if (maskMode(value) === 'substring') secrets.push({ value, source: 'default' });
  }
  return { env, rules, secrets, passedVarFiles };
}

export interface InitDeps {
  /** Checks a working directory's lock file against the provider mirrors before `init`. */
  providers?: ProviderNeeds;
  providerMirrors?: readonly string[];
  writeFile?(path: string, text: string): Promise<void>;
  exists?(path: string): Promise<boolean>;
  /** The root module's `module` calls (source, version), for a registry module's need. */
  moduleCalls?(dir: string, maxBytes: number): Promise<ModuleCall[]>;
}

export type InitOutcome =
  | { ok: true }
  | { ok: false; kind: 'blocked'; reason: string; needs: string[] }
  | { ok: false; kind: 'failed'; reason: string; out: ToolOutput; exitCode?: number | null };

/**
 * `init` with providers only from the delivered mirrors: a lock file's providers missing from them are
 * `blocked` with those needs before anything runs; an `init` that cannot find one in the mirrors is
 * `blocked` too, and so is one that cannot fetch a module (the need names its source); any other `init`
 * failure is `failed`. Points `env` at a CLI configuration and data
 * directory in `scratchPath`. `run` runs the tool with the given arguments in `dir`.
 */
export async function offlineInit(
  dir: string,
  scratchPath: string,
  env: Record<string, string>,
  deps: InitDeps,
  run: (args: string[]) => Promise<ProcessResult>,
): Promise<InitOutcome> {
  const lockFile = deps.exists ? await deps.exists(`${dir}/.terraform.lock.hcl`) : false;
  if (lockFile && deps.providers) {
    const check = await deps.providers.check(dir);
    if (!check.ok)
      return {
        ok: false,
        kind: 'failed',
        reason: 'lock-file-invalid',
        out: { stderr: `Error: ${check.problem}` },
      };
    if (check.needs.length > 0)
      return { ok: false, kind: 'blocked', reason: 'providers-missing', needs: check.needs };
  }
  const cliConfig = `${scratchPath}/terraform.rc`;
  await deps.writeFile?.(cliConfig, offlineCliConfig(deps.providerMirrors ?? []));
  env.TF_CLI_CONFIG_FILE = cliConfig;
  env.TF_DATA_DIR = `${scratchPath}/tf-data`;
  delete env.TF_PLUGIN_CACHE_DIR;
  const r = await run(initArgs(lockFile));
  if (!r.spawnError && !r.timedOut && r.exitCode === 0) return { ok: true };
  const needs = initNeeds(r);
  if (needs.length > 0) return { ok: false, kind: 'blocked', reason: 'providers-missing', needs };
  // A module the site cannot fetch offline is something headquarters can deliver, not a broken plan.
  const modules = initModuleNeeds(
    r,
    deps.moduleCalls ? await deps.moduleCalls(dir, 256 * 1024).catch(() => []) : [],
  );
  if (modules.length > 0) return { ok: false, kind: 'blocked', reason: 'modules-missing', needs: modules };
  return { ok: false, kind: 'failed', reason: `init-${failureReason(r)}`, out: r, exitCode: r.exitCode };
}
