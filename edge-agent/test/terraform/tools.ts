import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, for the simulation's fake terraform and the test provider (used by path). */
export const REPO = resolve(fileURLToPath(import.meta.url), '../../../..');
export const FAKE_BIN_DIR = join(REPO, 'simulation', 'bin');

/** One program the Terraform contract runs against. */
export interface ContractTool {
  /** `fake` (simulation/bin/terraform), `terraform` or `tofu` (real binaries on PATH). */
  name: 'fake' | 'terraform' | 'tofu';
  /** The component's `tool:` setting. */
  tool: 'terraform' | 'tofu';
  /** PATH the agent runs it with. */
  path: string;
  /** Its version, or why it cannot run here. */
  found: { ok: true; version: string } | { ok: false; reason: string };
}

/** PATH without the simulation's fake, so `terraform` means the real binary. */
export function realPath(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d !== '' && resolve(d) !== FAKE_BIN_DIR)
    .join(delimiter);
}

function versionOf(program: string, path: string): ContractTool['found'] {
  try {
    const out = execFileSync(program, ['version', '-json'], {
      encoding: 'utf8',
      env: { PATH: path, HOME: process.env.HOME ?? '/tmp', CHECKPOINT_DISABLE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const v = (JSON.parse(out) as { terraform_version?: string }).terraform_version;
    return v
      ? { ok: true, version: v }
      : { ok: false, reason: `\`${program} version -json\` names no version` };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return err.code === 'ENOENT'
      ? { ok: false, reason: `no ${program} on PATH` }
      : {
          ok: false,
          reason: `${program} is on PATH but \`${program} version -json\` failed: ${err.message.split('\n')[0]}`,
        };
  }
}

export function fakeTool(): ContractTool {
  const path = [FAKE_BIN_DIR, realPath()].join(delimiter);
  const found: ContractTool['found'] = existsSync(join(FAKE_BIN_DIR, 'terraform'))
    ? { ok: true, version: 'fake' }
    : { ok: false, reason: 'simulation/bin/terraform is missing' };
  return { name: 'fake', tool: 'terraform', path, found };
}

export function realTool(name: 'terraform' | 'tofu'): ContractTool {
  const path = realPath();
  return { name, tool: name, path, found: versionOf(name, path) };
}

/**
 * Whether a missing real binary fails the suite instead of skipping it: `DRIFTLINE_REQUIRE_TERRAFORM=1`
 * (set by .ci/run wherever terraform is on PATH) for terraform; `DRIFTLINE_REQUIRE_TOFU=1` for tofu.
 */
export function required(tool: ContractTool): boolean {
  if (tool.name === 'terraform') return process.env.DRIFTLINE_REQUIRE_TERRAFORM === '1';
  if (tool.name === 'tofu') return process.env.DRIFTLINE_REQUIRE_TOFU === '1';
  return true;
}
