import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = new URL('../bin/terraform', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'fake-tf-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tf(cwd: string, ...args: string[]) {
  const r = spawnSync(BIN, args, { cwd, encoding: 'utf8', timeout: 30_000, env: { ...process.env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function component(name: string, scenario: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'fake-terraform.yaml'), scenario);
  return dir;
}

const PLAN = ['plan', '-input=false', '-out=tf.plan', '-detailed-exitcode', '-lock-timeout=5s'];

describe('simulation/bin/terraform (a real executable)', () => {
  it("plans through its scenario with terraform's exit codes and shows the plan as JSON", () => {
    const dir = component(
      'network',
      'environment: prod\nseed: 3\nsteps:\n  - state: changes\n  - state: clean\n  - state: locked\n',
    );
    const first = tf(dir, ...PLAN);
    expect(first.code).toBe(2);
    expect(first.stdout).toMatch(/Plan: \d+ to add, \d+ to change, \d+ to destroy\./);
    const show = tf(dir, 'show', '-json', 'tf.plan');
    expect(show.code).toBe(0);
    const plan = JSON.parse(show.stdout);
    expect(plan.format_version).toBe('1.2');
    expect(plan.variables.environment.value).toBe('prod');
    expect(tf(dir, ...PLAN).code).toBe(0);
    const locked = tf(dir, ...PLAN);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toContain('Error acquiring the state lock');
    expect(locked.stderr).toContain('Path:      driftline-state/prod/network/terraform.tfstate');
  }, 60_000);

  it('reports its version as terraform does, and works with -chdir', () => {
    const dir = component('dns', 'terraformVersion: 1.6.6\nsteps:\n  - state: clean\n');
    const v = JSON.parse(tf(root, '-chdir=dns', 'version', '-json').stdout);
    expect(v).toMatchObject({
      terraform_version: '1.6.6',
      platform: 'linux_amd64',
      terraform_outdated: false,
    });
    expect(tf(dir, 'version').stdout).toMatch(/^Terraform v1\.6\.6\n/);
  }, 60_000);

  it('fails a variable validation rule on the value of the -var-file it is given, in text or -json', () => {
    const dir = component('db', 'environment: staging\nsteps:\n  - state: invalid-variable\n');
    writeFileSync(join(dir, 'staging.tfvars'), 'db_password = "correct-horse-battery-staple"\n');
    const text = tf(dir, ...PLAN, '-var-file=staging.tfvars');
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('var.db_password is "correct-horse-battery-staple"');
    const json = tf(dir, 'plan', '-json', '-out=tf.plan', '-var-file=staging.tfvars');
    expect(json.code).toBe(1);
    const diag = JSON.parse(json.stdout.trim().split('\n').pop() as string);
    expect(diag.diagnostic.range.filename).toBe('staging.tfvars');
    expect(diag.diagnostic.snippet.code).toContain('correct-horse-battery-staple');
  }, 60_000);

  it('refuses a broken scenario with exit 1 and a list of what is wrong', () => {
    const dir = component('broken', 'steps:\n  - state: exploded\n');
    const r = tf(dir, ...PLAN);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid fake-terraform scenario .*fake-terraform\.yaml/);
    expect(r.stderr).toMatch(/steps\.0\.state/);
  }, 60_000);
});
