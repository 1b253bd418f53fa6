import { seededRandom } from '../rng.js';
import { infraContext } from './infra.js';
import { failureText, lockErrorText, planText } from './messages.js';
import { buildPlan } from './planJson.js';
import { pickStep, type Scenario, type Step, stepInstance } from './scenario.js';
import { hex } from './secrets.js';
import { boxToDiagnostic, changeSummaryMessage, diagnosticMessage, versionMessage } from './uiJson.js';
import { findOffender, type VarFile, validationDiagnostic, validationErrorText } from './validation.js';

/** What one fake `terraform` invocation does: output, exit code, maybe a plan file to write. */
export interface Outcome {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Content of the `-out` file, when the plan succeeded and one was asked for. */
  planFile?: string;
  /** How long to take before answering (the step's `durationMs`). */
  sleepMs?: number;
}

export const PLAN_FILE_MARK = 'driftline-fake-terraform-plan';
export const FIXED_TIMESTAMP = '2025-01-01T00:00:00Z';

export interface PlanContext {
  scenario: Scenario;
  /** 0-based count of earlier plan runs in this directory. */
  run: number;
  elapsedMs: number;
  component: string;
  environment: string;
  out: string | null;
  detailedExitcode: boolean;
  /** RFC 3339 timestamp to stamp the plan with (default: fixed, for byte-identical plans). */
  timestamp?: string;
  /** `-json`: the UI, diagnostics included, as JSON lines on stdout. */
  json?: boolean;
  /** The `-var-file`s as read from disk (a file that does not exist is left out). */
  varFiles?: VarFile[];
  /**
   * A number folded from the working directory's configuration files (0 when there are none): it
   * picks which changes and drift a plan finds, so a commit that changes the configuration plans differently.
   */
  configDigest?: number;
  /** An error that stops the plan before it starts (providers `init` has not installed), as stderr. */
  preflightError?: string;
  /** The state serial now, written into the saved plan (`apply` refuses it once the state moved on). */
  serial?: number;
  /** The step instance applied last: a plan in the same instance finds everything done (clean). */
  appliedInstance?: number;
}

/**
 * `terraform plan`: exit 0 when clean or drift only, 2 with changes under -detailed-exitcode (0
 * without), 1 on error — a lock error prints Terraform's "Error acquiring the state lock", a
 * validation failure quotes the offending value. With `-json` everything goes to stdout as JSON lines.
 */
export function planOutcome(p: PlanContext): Outcome & { state: string; step: number } {
  const o = textOutcome(p);
  if (!p.json) return o;
  const ts = p.timestamp ?? FIXED_TIMESTAMP;
  const head = versionMessage(p.scenario.terraformVersion, ts);
  if (o.exitCode === 1) {
    const diagnostic =
      o.state === 'invalid-variable'
        ? validationDiagnostic(offender(p), pickStep(p.scenario, p).step.variant)
        : boxToDiagnostic(o.stderr);
    return { ...o, stdout: head + diagnosticMessage(diagnostic, ts), stderr: '' };
  }
  const m = /Plan: (\d+) to add, (\d+) to change, (\d+) to destroy/.exec(o.stdout);
  const counts = m
    ? { add: Number(m[1]), change: Number(m[2]), remove: Number(m[3]) }
    : { add: 0, change: 0, remove: 0 };
  return { ...o, stdout: head + changeSummaryMessage(counts, ts) };
}

function offender(p: PlanContext) {
  const c = infraContext(p.component, p.environment, p.scenario.seed, 0);
  return findOffender(p.varFiles ?? [], c.secrets.dbPassword);
}

function textOutcome(p: PlanContext): Outcome & { state: string; step: number } {
  const { step, index } = pickStep(p.scenario, { run: p.run, elapsedMs: p.elapsedMs });
  const s = p.scenario;
  const base = { state: step.state, step: index, sleepMs: step.durationMs };
  const refreshing = 'Acquiring state lock. This may take a few moments...\n';
  if (p.preflightError)
    return { state: 'init-required', step: index, exitCode: 1, stdout: '', stderr: p.preflightError };
  if (step.state === 'invalid-variable') {
    return { ...base, exitCode: 1, stdout: '', stderr: validationErrorText(offender(p), step.variant) };
  }
  if (step.state === 'locked') {
    const r = seededRandom(`${s.seed}/${p.component}/${p.environment}/lock/${step.variant}`);
    const lockId = `${hex(r, 8)}-${hex(r, 4)}-${hex(r, 4)}-${hex(r, 4)}-${hex(r, 12)}`;
    const stderr = lockErrorText({
      lockId,
      path: `driftline-state/${p.environment}/${p.component}/terraform.tfstate`,
      who: `ops@console-${hex(r, 4)}`,
      version: s.terraformVersion,
      created: '2025-01-01 06:00:00.000000 +0000 UTC',
    });
    return { ...base, exitCode: 1, stdout: refreshing, stderr };
  }
  if (step.state === 'failed') {
    const c = infraContext(p.component, p.environment, s.seed, 0);
    return {
      ...base,
      exitCode: 1,
      stdout: refreshing,
      stderr: failureText({ region: c.region, accessKey: c.secrets.awsAccessKey, component: p.component }),
    };
  }
  const instance = stepInstance(s, { run: p.run, elapsedMs: p.elapsedMs });
  // An applied plan's changes are in the state: until the scenario moves on, nothing is left to do.
  const found =
    p.appliedInstance === instance ? 'clean' : step.state === 'apply-error' ? 'changes' : step.state;
  const { plan, counts } = buildPlan({
    component: p.component,
    environment: p.environment,
    state: found,
    variant: step.variant + (p.configDigest ?? 0),
    seed: s.seed,
    extraResources: s.extraResources,
    extraChanges: s.extraChanges,
    terraformVersion: s.terraformVersion,
    timestamp: p.timestamp ?? FIXED_TIMESTAMP,
  });
  if (step.checks) plan.checks = planChecks(step.checks);
  const exitCode = found === 'changes' && p.detailedExitcode ? 2 : 0;
  const saved = { serial: p.serial ?? 0, state: step.state, instance };
  return {
    ...base,
    exitCode,
    stdout: refreshing + planText(found, counts, p.out ?? undefined),
    stderr: '',
    ...(p.out ? { planFile: JSON.stringify({ [PLAN_FILE_MARK]: 1, ...saved, plan }) } : {}),
  };
}

/** `terraform show -json <file>`: the plan JSON on one line, or Terraform's error for a file it cannot read. */
export function showOutcome(file: string, content: string | null, json: boolean): Outcome {
  let plan: unknown = null;
  try {
    const parsed = content === null ? null : JSON.parse(content);
    if (parsed && parsed[PLAN_FILE_MARK] === 1) plan = parsed.plan;
  } catch {
    plan = null;
  }
  if (!plan) {
    const why =
      content === null ? 'no such file or directory' : 'the file is not a plan file written by this program';
    return {
      exitCode: 1,
      stdout: '',
      stderr: `╷\n│ Error: Failed to read the given file as a state or plan file\n│ \n│ ${file}: ${why}\n╵\n`,
    };
  }
  if (!json) return { exitCode: 0, stdout: 'This is a saved plan; use -json to read it.\n', stderr: '' };
  return { exitCode: 0, stdout: `${JSON.stringify(plan)}\n`, stderr: '' };
}

export function versionOutcome(version: string, json: boolean): Outcome {
  const stdout = json
    ? `${JSON.stringify(
        {
          terraform_version: version,
          platform: 'linux_amd64',
          provider_selections: {
            'registry.terraform.io/hashicorp/aws': '5.60.0',
            'registry.terraform.io/hashicorp/random': '3.6.2',
            'registry.terraform.io/hashicorp/tls': '4.0.5',
          },
          terraform_outdated: false,
        },
        null,
        2,
      )}\n`
    : `Terraform v${version}\non linux_amd64\n`;
  return { exitCode: 0, stdout, stderr: '' };
}

/** A step's checks as `terraform show -json` prints them (`address.to_display`, instances with problems). */
function planChecks(checks: NonNullable<Step['checks']>): unknown[] {
  return checks.map((c) => {
    const name = c.address.split('.').at(-1) ?? c.address;
    const problems =
      c.message && (c.status === 'fail' || c.status === 'error') ? [{ message: c.message }] : [];
    return {
      address: { kind: c.kind, name, to_display: c.address },
      status: c.status,
      instances: [
        { address: { to_display: c.address }, status: c.status, ...(problems.length ? { problems } : {}) },
      ],
    };
  });
}
