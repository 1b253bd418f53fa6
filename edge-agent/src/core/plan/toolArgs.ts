import type { ProcessResult } from '../../ports/ProcessRunner.js';
import type { ComponentSettings } from '../settings.js';
import type { PlanTarget } from './planTarget.js';

/** Arguments and outcomes of the plan tool's invocations. */

export function fill(arg: string, t: PlanTarget, dir: string): string {
  return arg
    .replaceAll('{component}', t.component.name)
    .replaceAll('{environment}', t.environment.name)
    .replaceAll('{workingDir}', dir);
}

export function failureReason(r: ProcessResult): string {
  if (r.spawnError) return r.spawnError === 'ENOENT' ? 'tool-not-found' : 'spawn-failed';
  if (r.timedOut) return 'timeout';
  if (r.stdoutOverflow) return 'plan-too-large';
  if (r.exitCode === null) return `signal-${(r.signal ?? 'unknown').toLowerCase()}`;
  return `exit-${r.exitCode}`;
}

/** Go's flag package refusing `-json`: Terraform before 0.15.3 has no machine-readable plan output. */
export const NO_JSON_FLAG = /flag provided but not defined: -json/;

/**
 * `terraform plan` arguments. With `json`, diagnostics come as JSON lines on stdout (Terraform 0.15.3+,
 * OpenTofu), so an error excerpt can be built from their fields instead of from text that quotes values.
 */
export function planArgs(
  c: ComponentSettings,
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
export function errorName(e: unknown): string {
  return e instanceof Error ? e.name : typeof e;
}
