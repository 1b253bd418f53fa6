import type { PlanSummary } from '@driftline/protocol';
import type { Logger } from '../../ports/Logger.js';
import type { PlanFiles, StashedPlan } from '../../ports/PlanFiles.js';
import type { GitInfo, GitProbe, ScratchSpace } from '../../ports/PlanWorkspace.js';
import type { ProcessRunner } from '../../ports/ProcessRunner.js';
import type { SourceMirror } from '../../ports/SourceMirror.js';
import type { VarFiles } from '../../ports/VarFiles.js';
import type { DeclaredVariable } from '../redact/declaredVariables.js';
import { hmacFingerprint } from '../redact/maskValues.js';
import type { PlanSettings } from '../settings.js';
import { keyedPlanHash } from './applyDigest.js';
import { buildErrorExcerpt, isLockError, type ToolOutput } from './excerpt.js';
import type { ModuleCall } from './moduleCalls.js';
import { findTarget, type PlanTarget } from './planTarget.js';
import { planProviderNeeds } from './pluginNeeds.js';
import { type PlanSource, type ProviderNeeds, prepareSource } from './prepareSource.js';
import { parsePlanText, redactionFailed, sealSummary, summarisePlan } from './summarisePlan.js';
import { errorName, failureReason, fill, NO_JSON_FLAG, planArgs } from './toolArgs.js';
import { offlineInit, toolSetup } from './toolSetup.js';
import { unlockWhere } from './unlockWhere.js';

export interface RunPlanDeps {
  proc: ProcessRunner;
  git: GitProbe;
  scratch: ScratchSpace;
  clock: { now(): number };
  /** The agent's own environment (PATH, HOME, credentials the tool needs); `process.env` in production. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Reads the variable definitions files a run uses, so error output is scanned against their values. */
  varFiles?: VarFiles;
  /** The runner logs rule names and reasons, never values. */
  log?: Logger;
  /** The site's git mirrors, for components whose code comes as git bundles (`source`). */
  mirror?: SourceMirror;
  /** Checks a working directory's lock file against the provider mirrors before `init`. */
  providers?: ProviderNeeds;
  /** Filesystem mirrors `init` installs providers from. */
  providerMirrors?: readonly string[];
  /** Writes the generated CLI configuration. */
  writeFile?(path: string, text: string): Promise<void>;
  /** Whether a file exists (the lock file). */
  exists?(path: string): Promise<boolean>;
  /** The root module's `module` calls in a directory (a registry module's need names source and version). */
  moduleCalls?(dir: string, maxBytes: number): Promise<ModuleCall[]>;
  /** Whether a directory exists: a missing working directory fails that cell alone. */
  isDirectory?(path: string): Promise<boolean>;
  /** Where a run of an apply-enabled cell keeps its saved plan file (copied out of scratch space). */
  planFiles?: PlanFiles;
  /**
   * The site's secret key: `planHash` is then a keyed digest that covers values and, for a cell that keeps
   * its plan file, the commit (`keyedPlanHash`, decision 200). Without it, the sha256 of the detail.
   */
  siteKey?: Uint8Array;
  /** The variables the root module in a directory declares: their defaults are known values too. */
  moduleVariables?(dir: string, maxBytes: number): Promise<DeclaredVariable[]>;
}

export interface RunPlanOptions {
  /** Consecutive `locked` results of this cell before this run (persisted by the store). */
  lockedStreak?: number;
  /** Time between SIGTERM and SIGKILL on timeout. */
  killGraceMs?: number;
  /** The ref (and commit) to plan, for a component with `source`; default its default ref's head. */
  source?: PlanSource;
  /** Keep the saved plan file (an apply-enabled cell) and report its sha256 as `planFileSha256`. */
  keepPlanFile?: boolean;
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
  /** The saved plan file, kept out of scratch space (`keepPlanFile`): adopt it under the run's id or discard it. */
  keptPlan?: StashedPlan;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Runs the plan for one configured (component, environment) and returns its redacted summary
 * (steps 2–3 of docs/architecture.md#the-trip). Every outcome is a summary, never an exception: failures carry a reason and an
 * allow-listed, scanned excerpt (`buildErrorExcerpt`); a lock is `locked` until `lockRetryThreshold`
 * consecutive locks make it `failed`/`stuck-lock`; plan JSON past the nesting or key-length bounds is
 * `failed` with `plan-too-deep`/`plan-key-too-long`; a scan hit on the plan is `redaction-failed` with
 * nothing of the plan in it.
 */
export async function runPlan(
  component: string,
  environment: string,
  config: PlanSettings,
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
  config: PlanSettings,
  deps: RunPlanDeps,
  opts: RunPlanOptions,
): Promise<RunPlanResult> {
  const scratch = await deps.scratch.create();
  try {
    const prep = await prepareSource(t.component, t.environment, opts.source ?? {}, scratch.path, {
      mirror: deps.mirror,
      providers: deps.providers,
      providerMirrors: deps.providerMirrors ?? [],
      writeFile: deps.writeFile ?? (async () => {}),
      ...(deps.isDirectory ? { isDirectory: deps.isDirectory } : {}),
    });
    if (!prep.ok) {
      const summary: PlanSummary = {
        component: t.component.name,
        environment: t.environment.name,
        status: prep.status,
        reason: prep.reason,
        startedAt: iso(deps.clock.now()),
        finishedAt: iso(deps.clock.now()),
        ...(prep.ref ? { ref: prep.ref } : {}),
        ...(prep.needs ? { needs: prep.needs } : {}),
        ...(prep.excerpt ? { errorExcerpt: prep.excerpt } : {}),
      };
      deps.log?.warn(
        {
          component: summary.component,
          environment: summary.environment,
          reason: prep.reason,
          needs: prep.needs,
        },
        'the plan could not run here',
      );
      return { summary, lockedStreak: 0 };
    }
    try {
      return await runIn(
        t,
        config,
        deps,
        opts,
        { dir: prep.dir, ref: prep.ref, git: prep.git },
        scratch.path,
      );
    } finally {
      await prep.release().catch(() => {});
    }
  } finally {
    await scratch.dispose();
  }
}

/** Plans in `where.dir` (the working directory or a checked-out commit), using `scratchPath` for files. */
async function runIn(
  t: PlanTarget,
  config: PlanSettings,
  deps: RunPlanDeps,
  opts: RunPlanOptions,
  where: { dir: string; ref?: string; git?: GitInfo },
  scratchPath: string,
): Promise<RunPlanResult> {
  const component = t.component.name;
  const environment = t.environment.name;
  const c = t.component;
  const dir = where.dir;
  const { env, rules, secrets, passedVarFiles } = await toolSetup(t, config, deps, dir);
  const startedMs = deps.clock.now();
  const deadline = startedMs + c.timeoutS * 1000;
  const git = where.git ?? (await deps.git.describe(dir).catch(() => undefined));
  const base = {
    component,
    environment,
    startedAt: iso(startedMs),
    ...(where.ref ? { ref: where.ref } : {}),
  };
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
    lockError = false,
  ): RunPlanResult => {
    const s: PlanSummary = { ...base, finishedAt: iso(deps.clock.now()), status, reason };
    const excerpt = buildErrorExcerpt(out, secrets, rules, {
      keepCustomMessages: config.redaction.keepCustomMessages,
    });
    if (excerpt.excerpt !== undefined) s.errorExcerpt = excerpt.excerpt;
    if (lockError && excerpt.lock) s.lock = { ...excerpt.lock, ...unlockWhere(t, where, secrets, rules) };
    if (excerpt.lockWithheld)
      deps.log?.warn(
        { component, environment, rules: excerpt.lockWithheld },
        'redaction scan hit in the Lock Info: those fields are withheld, the others are reported',
      );
    if (git) s.git = git;
    if (typeof exitCode === 'number') s.exitCode = exitCode;
    const sealed = sealSummary(s, secrets, rules, { hash: false });
    if (!sealed.ok) return finish(redactionFailed(s, sealed.hit), { redactionHit: sealed.hit });
    return finish(sealed.summary, excerpt.withheld ? { excerptWithheld: excerpt.withheld } : {});
  };

  const lockedOrStuck = (out: ToolOutput): RunPlanResult => {
    const streak = (opts.lockedStreak ?? 0) + 1;
    return streak >= c.lockRetryThreshold
      ? failed('stuck-lock', 'failed', out, 1, true)
      : failed('state-locked', 'locked', out, 1, true);
  };

  const blocked = (reason: string, needs: string[]): RunPlanResult => {
    const summary: PlanSummary = {
      ...base,
      finishedAt: iso(deps.clock.now()),
      status: 'blocked',
      reason,
      needs,
    };
    if (git) summary.git = git;
    deps.log?.warn({ component, environment, needs }, 'the plan is blocked: the site lacks what it needs');
    return { summary, lockedStreak: 0 };
  };

  /** `init` from the delivered mirrors only (`offlineInit`); undefined when the directory is ready. */
  const runInit = async (dir: string): Promise<RunPlanResult | undefined> => {
    const r = await offlineInit(dir, scratchPath, env, deps, (args) =>
      deps.proc.run(spec(c.tool, args, config.limits.maxLogBytes)),
    );
    if (r.ok) return undefined;
    return r.kind === 'blocked' ? blocked(r.reason, r.needs) : failed(r.reason, 'failed', r.out, r.exitCode);
  };

  let planText: string;
  let planExit: number | undefined;
  let planFile: string | undefined;
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
    if (c.init ?? c.source !== undefined) {
      const ready = await runInit(dir);
      if (ready) return ready;
    }
    planFile = `${scratchPath}/plan.tfplan`;
    const out = planFile;
    // With -json the whole UI stream comes on stdout: allow it the plan's size.
    const runPlanStep = (json: boolean) =>
      deps.proc.run(spec(c.tool, planArgs(c, passedVarFiles, out, json), config.limits.maxPlanBytes));
    let plan = await runPlanStep(true);
    if (plan.exitCode === 1 && NO_JSON_FLAG.test(plan.stderr)) plan = await runPlanStep(false);
    if (
      plan.spawnError ||
      plan.timedOut ||
      plan.stdoutOverflow ||
      (plan.exitCode !== 0 && plan.exitCode !== 2)
    ) {
      if (plan.exitCode === 1 && isLockError(plan.stderr, plan.stdout)) return lockedOrStuck(plan);
      // Without `init:`, a provider that is not installed is something headquarters can deliver.
      const providers = plan.exitCode === 1 ? planProviderNeeds(plan) : [];
      if (providers.length > 0) return blocked('providers-missing', providers);
      return failed(failureReason(plan), 'failed', plan, plan.exitCode);
    }
    planExit = plan.exitCode;
    const show = await deps.proc.run(
      spec(c.tool, ['show', '-json', '-no-color', out], config.limits.maxPlanBytes),
    );
    if (show.spawnError || show.timedOut || show.stdoutOverflow || show.exitCode !== 0) {
      return failed(failureReason(show), 'failed', { stderr: show.stderr }, show.exitCode);
    }
    planText = show.stdout;
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
      // Variable values in addresses become tags keyed with the site's key (decision 210).
      publicVariables: config.redaction.publicVariables,
      keepCustomMessages: config.redaction.keepCustomMessages,
      ...(deps.siteKey ? { fingerprint: hmacFingerprint(deps.siteKey) } : {}),
    });
    if (!r.ok) return failed(r.reason, 'failed', { stderr: '' });
    if (r.redactionHit) return finish(r.summary, { redactionHit: r.redactionHit });
    // An apply-enabled cell keeps the file the plan was saved to (it never leaves the site): its hash is
    // what an approval names.
    const keptPlan =
      opts.keepPlanFile && planFile
        ? await deps.planFiles?.stash(planFile).catch((e) => {
            deps.log?.warn(
              { component, environment, error: errorName(e) },
              'the saved plan could not be kept',
            );
            return undefined;
          })
        : undefined;
    if (keptPlan) r.summary.planFileSha256 = keptPlan.sha256 as PlanSummary['planFileSha256'];
    // What decides "unchanged" covers what apply would do, values included, and the plan file's commit.
    if (deps.siteKey && r.canonical !== undefined && r.summary.planHash)
      r.summary.planHash = keyedPlanHash(
        deps.siteKey,
        r.canonical,
        parsed.value,
        opts.keepPlanFile ? git?.commit : undefined,
      );
    return finish(r.summary, {
      ...(r.canonical !== undefined ? { canonical: r.canonical } : {}),
      ...(keptPlan ? { keptPlan } : {}),
    });
  } catch (e) {
    // A bug, not an input: still a recorded `failed` run rather than a cell that silently goes stale.
    deps.log?.warn({ component, environment, error: errorName(e) }, 'summarising the plan threw');
    return failed('summarise-error', 'failed', { stderr: '' });
  }
}
