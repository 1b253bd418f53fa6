import type { PlanSummary } from '@driftline/protocol';
import type { AgentConfig, ComponentConfig, EnvironmentConfig } from '../../config.js';
import type { GitProbe, ScratchSpace } from '../../ports/PlanWorkspace.js';
import type { ProcessResult, ProcessRunner } from '../../ports/ProcessRunner.js';
import type { VarFiles } from '../../ports/VarFiles.js';
import { compileRules, type SecretRule } from '../redact/rules.js';
import { buildErrorExcerpt, isLockError, type ToolOutput } from './excerpt.js';
import { knownValues } from './knownValues.js';
import { parsePlanText, redactionFailed, sealSummary, summarisePlan } from './summarisePlan.js';

/** The slice of a pino logger the runner uses; it logs rule names and reasons, never values. */
export interface RunLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RunPlanDeps {
  proc: ProcessRunner;
  git: GitProbe;
  scratch: ScratchSpace;
  clock: { now(): number };
  /** The agent's own environment (PATH, HOME, credentials the tool needs); `process.env` in production. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Reads the variable definitions files a run uses, so error output is scanned against their values. */
  varFiles?: VarFiles;
  log?: RunLogger;
}

export interface RunPlanOptions {
  /** Consecutive `locked` results of this cell before this run (persisted by the store). */
  lockedStreak?: number;
  /** Time between SIGTERM and SIGKILL on timeout. */
  killGraceMs?: number;
}

export interface RunPlanResult {
  /** What leaves the site. */
  summary: PlanSummary;
  /** The canonical redacted detail whose sha256 is `summary.planHash`, when there is a plan. */
  canonical?: string;
  /** The cell's consecutive-locked count after this run: store it and pass it to the next run. */
  lockedStreak: number;
  /** The rule that made the scan fail closed, for the local log. */
  redactionHit?: string;
  /** The rule that made a failed run's error excerpt be withheld (the run itself is still reported). */
  excerptWithheld?: string;
}

export interface PlanTarget {
  component: ComponentConfig;
  environment: EnvironmentConfig;
}

/** The configured (component, environment), or undefined: nothing outside the local config ever runs (S3). */
export function findTarget(
  config: AgentConfig,
  component: string,
  environment: string,
): PlanTarget | undefined {
  const c = config.components.find((x) => x.name === component);
  const e = c?.environments.find((x) => x.name === environment);
  return c && e ? { component: c, environment: e } : undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

function fill(arg: string, t: PlanTarget, dir: string): string {
  return arg
    .replaceAll('{component}', t.component.name)
    .replaceAll('{environment}', t.environment.name)
    .replaceAll('{workingDir}', dir);
}

function failureReason(r: ProcessResult): string {
  if (r.spawnError) return r.spawnError === 'ENOENT' ? 'tool-not-found' : 'spawn-failed';
  if (r.timedOut) return 'timeout';
  if (r.stdoutOverflow) return 'plan-too-large';
  if (r.exitCode === null) return `signal-${(r.signal ?? 'unknown').toLowerCase()}`;
  return `exit-${r.exitCode}`;
}

/** Go's flag package refusing `-json`: Terraform before 0.15.3 has no machine-readable plan output. */
const NO_JSON_FLAG = /flag provided but not defined: -json/;

/**
 * `terraform plan` arguments. With `json`, diagnostics come as JSON lines on stdout (Terraform 0.15.3+,
 * OpenTofu), so an error excerpt can be built from their fields instead of from text that quotes values.
 */
function planArgs(
  c: ComponentConfig,
  varFiles: readonly string[],
  planFile: string,
  json: boolean,
): string[] {
  return [
    'plan',
    '-input=false',
    '-no-color',
    ...(json ? ['-json'] : []),
    `-out=${planFile}`,
    '-detailed-exitcode',
    `-lock-timeout=${c.lockTimeoutS}s`,
    ...varFiles.map((f) => `-var-file=${f}`),
  ];
}

/** The exception's class only: its message could quote input. */
function errorName(e: unknown): string {
  return e instanceof Error ? e.name : typeof e;
}

/**
 * Runs the plan for one configured (component, environment) and returns its redacted summary
 * (DESIGN steps 2–3). Every outcome is a summary, never an exception: failures carry a reason and an
 * allow-listed, scanned excerpt (`buildErrorExcerpt`); a lock is `locked` until `lockRetryThreshold`
 * consecutive locks make it `failed`/`stuck-lock`; plan JSON past the nesting or key-length bounds is
 * `failed` with `plan-too-deep`/`plan-key-too-long`; a scan hit on the plan is `redaction-failed` with
 * nothing of the plan in it.
 */
export async function runPlan(
  component: string,
  environment: string,
  config: AgentConfig,
  deps: RunPlanDeps,
  opts: RunPlanOptions = {},
): Promise<RunPlanResult> {
  const t = findTarget(config, component, environment);
  if (!t) throw new Error(`no component "${component}" with environment "${environment}" in the config`);
  const startedAt = iso(deps.clock.now());
  try {
    return await runTarget(t, config, deps, opts);
  } catch (e) {
    // Scratch space, git or the runner failing is the agent's fault, not the plan's: still a recorded
    // `failed` run, never a cell that silently goes stale.
    deps.log?.warn({ component, environment, error: errorName(e) }, 'the plan run threw');
    const summary: PlanSummary = {
      component,
      environment,
      status: 'failed',
      reason: 'agent-error',
      startedAt,
      finishedAt: iso(deps.clock.now()),
    };
    return { summary, lockedStreak: 0 };
  }
}

async function runTarget(
  t: PlanTarget,
  config: AgentConfig,
  deps: RunPlanDeps,
  opts: RunPlanOptions,
): Promise<RunPlanResult> {
  const component = t.component.name;
  const environment = t.environment.name;
  const c = t.component;
  const dir = t.environment.workingDir ?? c.workingDir;
  const rules: readonly SecretRule[] = compileRules(config.redaction.patterns);
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
  const startedMs = deps.clock.now();
  const deadline = startedMs + c.timeoutS * 1000;
  const git = await deps.git.describe(dir).catch(() => undefined);
  const base = { component, environment, startedAt: iso(startedMs) };
  const spec = (command: string, args: string[], maxStdoutBytes: number) => ({
    command,
    args,
    cwd: dir,
    env,
    timeoutMs: Math.max(1, deadline - deps.clock.now()),
    killGraceMs: opts.killGraceMs ?? 10_000,
    maxStdoutBytes,
    maxStderrBytes: config.limits.maxLogBytes,
  });

  const finish = (summary: PlanSummary, extra: Partial<RunPlanResult> = {}): RunPlanResult => {
    const lockedStreak =
      summary.status === 'locked' || summary.reason === 'stuck-lock' ? (opts.lockedStreak ?? 0) + 1 : 0;
    if (extra.redactionHit) {
      deps.log?.warn(
        { component, environment, rule: extra.redactionHit },
        'redaction scan hit: the run is recorded as redaction-failed and nothing of it leaves',
      );
    } else {
      if (extra.excerptWithheld) {
        deps.log?.warn(
          { component, environment, rule: extra.excerptWithheld },
          'redaction scan hit in the error output: the excerpt is withheld, the failure is still reported',
        );
      }
      deps.log?.info(
        { component, environment, status: summary.status, reason: summary.reason },
        'plan finished',
      );
    }
    return { summary, lockedStreak, ...extra };
  };

  const failed = (
    reason: string,
    status: 'failed' | 'locked',
    out: ToolOutput,
    exitCode?: number | null,
  ): RunPlanResult => {
    const s: PlanSummary = { ...base, finishedAt: iso(deps.clock.now()), status, reason };
    const excerpt = buildErrorExcerpt(out, secrets, rules);
    if (excerpt.excerpt !== undefined) s.errorExcerpt = excerpt.excerpt;
    if (git) s.git = git;
    if (typeof exitCode === 'number') s.exitCode = exitCode;
    const sealed = sealSummary(s, secrets, rules, { hash: false });
    if (!sealed.ok) return finish(redactionFailed(s, sealed.hit), { redactionHit: sealed.hit });
    return finish(sealed.summary, excerpt.withheld ? { excerptWithheld: excerpt.withheld } : {});
  };

  const lockedOrStuck = (out: ToolOutput): RunPlanResult => {
    const streak = (opts.lockedStreak ?? 0) + 1;
    return streak >= c.lockRetryThreshold
      ? failed('stuck-lock', 'failed', out, 1)
      : failed('state-locked', 'locked', out, 1);
  };

  let planText: string;
  let planExit: number | undefined;
  if (c.command) {
    const [cmd, ...args] = c.command.map((a) => fill(a, t, dir)) as [string, ...string[]];
    const r = await deps.proc.run(spec(cmd, args, config.limits.maxPlanBytes));
    if (r.spawnError || r.timedOut || r.stdoutOverflow || (r.exitCode !== 0 && r.exitCode !== 2)) {
      if (r.exitCode === 1 && isLockError(r.stderr, r.stdout)) return lockedOrStuck(r);
      return failed(failureReason(r), 'failed', r, r.exitCode);
    }
    planText = r.stdout;
    planExit = r.exitCode;
  } else {
    const scratch = await deps.scratch.create();
    try {
      const planFile = `${scratch.path}/plan.tfplan`;
      // With -json the whole UI stream comes on stdout: allow it the plan's size.
      const runPlanStep = (json: boolean) =>
        deps.proc.run(spec(c.tool, planArgs(c, passedVarFiles, planFile, json), config.limits.maxPlanBytes));
      let plan = await runPlanStep(true);
      if (plan.exitCode === 1 && NO_JSON_FLAG.test(plan.stderr)) plan = await runPlanStep(false);
      if (
        plan.spawnError ||
        plan.timedOut ||
        plan.stdoutOverflow ||
        (plan.exitCode !== 0 && plan.exitCode !== 2)
      ) {
        if (plan.exitCode === 1 && isLockError(plan.stderr, plan.stdout)) return lockedOrStuck(plan);
        return failed(failureReason(plan), 'failed', plan, plan.exitCode);
      }
      planExit = plan.exitCode;
      const show = await deps.proc.run(
        spec(c.tool, ['show', '-json', '-no-color', planFile], config.limits.maxPlanBytes),
      );
      if (show.spawnError || show.timedOut || show.stdoutOverflow || show.exitCode !== 0) {
        return failed(failureReason(show), 'failed', { stderr: show.stderr }, show.exitCode);
      }
      planText = show.stdout;
    } finally {
      await scratch.dispose();
    }
  }

  try {
    const parsed = parsePlanText(planText);
    if (!parsed.ok) return failed(parsed.reason, 'failed', { stderr: '' });
    const r = summarisePlan(parsed.value, {
      ...base,
      finishedAt: iso(deps.clock.now()),
      ...(git ? { git } : {}),
      exitCode: planExit,
      sensitiveAttributes: config.redaction.sensitiveAttributes,
      rules,
      extraSecrets: secrets,
    });
    if (!r.ok) return failed(r.reason, 'failed', { stderr: '' });
    if (r.redactionHit) return finish(r.summary, { redactionHit: r.redactionHit });
    return finish(r.summary, r.canonical !== undefined ? { canonical: r.canonical } : {});
  } catch (e) {
    // A bug, not an input: still a recorded `failed` run rather than a cell that silently goes stale.
    deps.log?.warn({ component, environment, error: errorName(e) }, 'summarising the plan threw');
    return failed('summarise-error', 'failed', { stderr: '' });
  }
}
