import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAKE_TERRAFORM_DIR } from './programs.js';

/**
 * The demo on the real `terraform` (`npm start -- --terraform=real`): each cell's working directory
 * holds a small stack of `terraform_data` resources (Terraform's built-in provider: nothing to
 * install, works offline) and its own local state, set up so the fleet shows a mix of what real plans
 * find: clean, changes (an update, a create) and a failure.
 */

/** PATH without the simulation's fake terraform: the real binary is what answers. */
export function realToolPath(): string {
  return (process.env.PATH ?? '')
    .split(':')
    .filter((d) => d !== FAKE_TERRAFORM_DIR)
    .join(':');
}

/** The environment the real terraform runs with here: no update check, no machine CLI configuration. */
export function realToolEnv(home: string): Record<string, string> {
  return {
    PATH: realToolPath(),
    HOME: home,
    CHECKPOINT_DISABLE: '1',
    TF_CLI_CONFIG_FILE: '',
    TF_IN_AUTOMATION: '1',
  };
}

/** What a cell's plan finds once its stack is set up, by the cell's seed. */
export type RealStackKind = 'clean' | 'update' | 'create' | 'failed';
const KINDS: readonly RealStackKind[] = ['clean', 'update', 'clean', 'create', 'clean', 'failed'];
export const realStackKind = (seed: number): RealStackKind => KINDS[seed % KINDS.length] as RealStackKind;

/** `terraform_data` resources of one cell; `version` is the value an update changes. */
export function realStackText(
  component: string,
  environment: string,
  version: number,
  failed = false,
): string {
  return [
    `# ${component}/${environment}: terraform_data only (the built-in provider), for the demo on the real terraform`,
    'variable "admin_password" {',
    '  type      = string',
    '  sensitive = true',
    `  default   = "demo-${component}-${environment}-pw"`,
    '}',
    'resource "terraform_data" "config" {',
    `  input = { name = "${component}-${environment}", version = "v${version}", replicas = ${(version % 3) + 1} }`,
    '}',
    'resource "terraform_data" "credentials" {',
    '  input = var.admin_password',
    '}',
    'resource "terraform_data" "release" {',
    '  triggers_replace = [terraform_data.config.output.version]',
    '}',
    'output "config_version" { value = terraform_data.config.output.version }',
    // An undeclared variable: the plan fails as a real configuration error does.
    ...(failed ? ['resource "terraform_data" "broken" { input = var.undeclared_setting }'] : []),
    '',
  ].join('\n');
}

function terraform(cwd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('terraform', args, { cwd, env: realToolEnv(cwd), timeout: 120_000 }, (err, _out, stderr) =>
      err ? reject(new Error(`terraform ${args[0]} in ${cwd} failed: ${stderr.slice(0, 500)}`)) : resolve(),
    );
  });
}

/**
 * Writes a cell's stack into `wd`; for a `clean` or `update` cell, applies it first (real state), and
 * for `update` then proposes the next version, so its plans show an in-place update and a replacement.
 */
export async function writeRealStack(
  wd: string,
  component: string,
  environment: string,
  seed: number,
): Promise<void> {
  const kind = realStackKind(seed);
  const main = join(wd, 'main.tf');
  writeFileSync(main, realStackText(component, environment, 1, kind === 'failed'));
  if (kind !== 'clean' && kind !== 'update') return;
  await terraform(wd, ['apply', '-auto-approve', '-input=false', '-no-color']);
  if (kind === 'update') writeFileSync(main, realStackText(component, environment, 2));
}
