import type { PlanSummary } from '@driftline/protocol';
import type { AgentConfig, ComponentConfig, EnvironmentConfig } from '../../config.js';
import type { GitProbe, ScratchSpace } from '../../ports/PlanWorkspace.js';
import type { ProcessResult, ProcessRunner } from '../../ports/ProcessRunner.js';
import { compileRules, type SecretRule } from '../redact/rules.js';
import { MIN_SECRET_LENGTH, type SecretValue } from '../redact/scan.js';
import { errorExcerpt, isLockError } from './excerpt.js';
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

/** Values of the environment variables the config passes to the tool: they must not leave either. */
function envSecrets(env: Record<string, string>): SecretValue[] {
  return Object.values(env)
    .filter((v) => v.length >= MIN_SECRET_LENGTH)
    .map((value) => ({ value, source: 'env' }));
}

function failureReason(r: ProcessResult): string {
  if (r.spawnError) return r.spawnError === 'ENOENT' ? 'tool-not-found' : 'spawn-failed';
  if (r.timedOut) return 'timeout';
  if (r.stdoutOverflow) return 'plan-too-large';
  if (r.exitCode === null) return `signal-${(r.signal ?? 'unknown').toLowerCase()}`;
  return `exit-${r.exitCode}`;
}

/**
 * Runs the plan for one configured (component, environment) and returns its redacted summary
 * (DESIGN steps 2–3). Every outcome is a summary: failures carry a reason and a scanned excerpt;
 * a lock is `locked` until `lockRetryThreshold` consecutive locks make it `failed`/`stuck-lock`;
 * a scan hit is `redaction-failed` with nothing of the plan in it.
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
  const c = t.component;
  const dir = t.environment.workingDir ?? c.workingDir;
  const rules: readonly SecretRule[] = compileRules(config.redaction.patterns);
  const extraEnv: Record<string, string> = { ...c.env, ...(t.environment.env ?? {}) };
  if (t.environment.workspace) extraEnv.TF_WORKSPACE = t.environment.workspace;
  const env: Record<string, string> = { TF_IN_AUTOMATION: '1', TF_INPUT: '0' };
  for (const [k, v] of Object.entries(deps.baseEnv)) if (v !== undefined) env[k] = v;
  Object.assign(env, extraEnv);
  const tfVars = Object.fromEntries(
    Object.entries(deps.baseEnv).filter(([k, v]) => k.startsWith('TF_VAR_') && v !== undefined),
  ) as Record<string, string>;
  const secrets = envSecrets({ ...tfVars, ...extraEnv });
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
    stderr: string,
    exitCode?: number | null,
  ): RunPlanResult => {
    const s: PlanSummary = { ...base, finishedAt: iso(deps.clock.now()), status, reason };
    const excerpt = errorExcerpt(stderr);
    if (excerpt) s.errorExcerpt = excerpt;
    if (git) s.git = git;
    if (typeof exitCode === 'number') s.exitCode = exitCode;
    const sealed = sealSummary(s, secrets, rules, { hash: false });
    if (!sealed.ok) return finish(redactionFailed(s, sealed.hit), { redactionHit: sealed.hit });
    return finish(sealed.summary);
  };

  let planText: string;
  let planExit: number | undefined;
  if (c.command) {
    const [cmd, ...args] = c.command.map((a) => fill(a, t, dir)) as [string, ...string[]];
    const r = await deps.proc.run(spec(cmd, args, config.limits.maxPlanBytes));
    if (r.spawnError || r.timedOut || r.stdoutOverflow || (r.exitCode !== 0 && r.exitCode !== 2)) {
      if (r.exitCode === 1 && isLockError(r.stderr)) return lockedOrStuck(r.stderr);
      return failed(failureReason(r), 'failed', r.stderr, r.exitCode);
    }
    planText = r.stdout;
    planExit = r.exitCode;
  } else {
    const scratch = await deps.scratch.create();
    try {
      const planFile = `${scratch.path}/plan.tfplan`;
      const varFiles = (t.environment.varFiles ?? []).map((f) => `-var-file=${f}`);
      const plan = await deps.proc.run(
        spec(
          c.tool,
          [
            'plan',
            '-input=false',
            '-no-color',
            `-out=${planFile}`,
            '-detailed-exitcode',
            `-lock-timeout=${c.lockTimeoutS}s`,
            ...varFiles,
          ],
          config.limits.maxLogBytes,
        ),
      );
      if (plan.spawnError || plan.timedOut || (plan.exitCode !== 0 && plan.exitCode !== 2)) {
        if (plan.exitCode === 1 && isLockError(plan.stderr)) return lockedOrStuck(plan.stderr);
        return failed(failureReason(plan), 'failed', plan.stderr, plan.exitCode);
      }
      planExit = plan.exitCode;
      const show = await deps.proc.run(
        spec(c.tool, ['show', '-json', '-no-color', planFile], config.limits.maxPlanBytes),
      );
      if (show.spawnError || show.timedOut || show.stdoutOverflow || show.exitCode !== 0) {
        return failed(failureReason(show), 'failed', show.stderr, show.exitCode);
      }
      planText = show.stdout;
    } finally {
      await scratch.dispose();
    }
  }

  const parsed = parsePlanText(planText);
  if (!parsed.ok) return failed(parsed.reason, 'failed', '');
  const r = summarisePlan(parsed.value, {
    ...base,
    finishedAt: iso(deps.clock.now()),
    ...(git ? { git } : {}),
    exitCode: planExit,
    sensitiveAttributes: config.redaction.sensitiveAttributes,
    rules,
    extraSecrets: secrets,
  });
  if (!r.ok) return failed(r.reason, 'failed', '');
  if (r.redactionHit) return finish(r.summary, { redactionHit: r.redactionHit });
  return finish(r.summary, r.canonical !== undefined ? { canonical: r.canonical } : {});

  function lockedOrStuck(stderr: string): RunPlanResult {
    const streak = (opts.lockedStreak ?? 0) + 1;
    return streak >= c.lockRetryThreshold
      ? failed('stuck-lock', 'failed', stderr, 1)
      : failed('state-locked', 'locked', stderr, 1);
  }
}
