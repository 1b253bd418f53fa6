import type { KeptPlan } from '../../ports/PlanFiles.js';
import type { ProcessResult } from '../../ports/ProcessRunner.js';
import { buildErrorExcerpt, isLockError, type ToolOutput } from '../plan/excerpt.js';
import type { PlanTarget } from '../plan/planTarget.js';
import { prepareSource } from '../plan/prepareSource.js';
import type { RunPlanDeps } from '../plan/runPlan.js';
import { errorName, failureReason } from '../plan/toolArgs.js';
import { offlineInit, toolSetup } from '../plan/toolSetup.js';
import type { PlanSettings } from '../settings.js';

/** How an apply ended. Times on the agent's clock, ms. */
export interface ApplyResult {
  state: 'applied' | 'apply-failed';
  /** Why it failed: `exit-1`, `timeout`, `stale-plan`, `state-locked`, `init-…`, `source-missing`, … */
  reason?: string;
  /** The allow-listed, scanned excerpt of the failure (the same rules as a failed plan's). */
  errorExcerpt?: string;
  /** The rule that withheld the excerpt, for the local log. */
  excerptWithheld?: string;
  startedAt: number;
  finishedAt: number;
}

/** `apply` arguments: no input, no colour, the plan's lock timeout, the saved plan file and nothing else. */
export function applyArgs(lockTimeoutS: number, planFile: string): string[] {
  return ['apply', '-input=false', '-no-color', `-lock-timeout=${lockTimeoutS}s`, planFile];
}

/** Terraform's and OpenTofu's refusal of a saved plan whose state changed since it was made. */
const STALE = /Saved plan is stale/i;

/**
 * Applies one kept plan file where the plan ran: the configured working directory, or (a component with
 * `source`) the same commit checked out again into scratch space with the same offline `init`. Runs with
 * the component's timeout and environment; a failure's excerpt is built like a failed plan's. Never throws.
 */
export async function runApply(
  t: PlanTarget,
  config: PlanSettings,
  deps: RunPlanDeps,
  plan: KeptPlan,
  opts: { killGraceMs?: number } = {},
): Promise<ApplyResult> {
  const startedAt = deps.clock.now();
  const c = t.component;
  const ended = (state: ApplyResult['state'], extra: Partial<ApplyResult> = {}): ApplyResult => ({
    state,
    startedAt,
    finishedAt: deps.clock.now(),
    ...extra,
  });
  let scratch: { path: string; dispose(): Promise<void> } | undefined;
  try {
    scratch = await deps.scratch.create();
    const want = c.source
      ? { ref: plan.meta.ref, ...(plan.meta.commit ? { commit: plan.meta.commit } : {}) }
      : {};
    const prep = await prepareSource(c, t.environment, want, scratch.path, {
      mirror: deps.mirror,
      providers: deps.providers,
      providerMirrors: deps.providerMirrors ?? [],
      writeFile: deps.writeFile ?? (async () => {}),
    });
    if (!prep.ok) return ended('apply-failed', { reason: prep.reason });
    try {
      const { env, rules, secrets } = await toolSetup(t, config, deps, prep.dir);
      const deadline = startedAt + c.timeoutS * 1000;
      const run = (args: string[], maxStdoutBytes: number): Promise<ProcessResult> =>
        deps.proc.run({
          command: c.tool,
          args,
          cwd: prep.dir,
          env,
          timeoutMs: Math.max(1, deadline - deps.clock.now()),
          killGraceMs: opts.killGraceMs ?? 10_000,
          maxStdoutBytes,
          maxStderrBytes: config.limits.maxLogBytes,
        });
      const failed = (reason: string, out: ToolOutput) => {
        const excerpt = buildErrorExcerpt(out, secrets, rules, {
          keepCustomMessages: config.redaction.keepCustomMessages,
        });
        return ended('apply-failed', {
          reason,
          ...(excerpt.excerpt !== undefined ? { errorExcerpt: excerpt.excerpt } : {}),
          ...(excerpt.withheld ? { excerptWithheld: excerpt.withheld } : {}),
        });
      };
      if (c.init ?? c.source !== undefined) {
        const init = await offlineInit(prep.dir, scratch.path, env, deps, (args) =>
          run(args, config.limits.maxLogBytes),
        );
        if (!init.ok)
          return init.kind === 'blocked'
            ? ended('apply-failed', { reason: init.reason })
            : failed(init.reason, init.out);
      }
      // Only the saved plan is applied: no -var-file, no -target, nothing the plan did not fix already.
      const r = await run(applyArgs(c.lockTimeoutS, plan.path), config.limits.maxPlanBytes);
      if (!r.spawnError && !r.timedOut && r.exitCode === 0) return ended('applied');
      const text = `${r.stdout.slice(-64 * 1024)}\n${r.stderr}`;
      const reason = STALE.test(text)
        ? 'stale-plan'
        : r.exitCode === 1 && isLockError(text)
          ? 'state-locked'
          : failureReason(r);
      return failed(reason, { stdout: r.stdout, stderr: r.stderr });
    } finally {
      await prep.release().catch(() => {});
    }
  } catch (e) {
    deps.log?.warn(
      { component: c.name, environment: t.environment.name, error: errorName(e) },
      'the apply threw',
    );
    return ended('apply-failed', { reason: 'agent-error' });
  } finally {
    await scratch?.dispose().catch(() => {});
  }
}
