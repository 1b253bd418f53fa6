import { execFileSync } from 'node:child_process';
import { describe, it } from 'vitest';
import { FAKE_TERRAFORM_DIR } from '../src/topology/programs.js';

/** The real `terraform` on PATH (never the simulation's fake) and its version, or why there is none. */
export type RealTerraform = { ok: true; version: string } | { ok: false; reason: string };

let found: RealTerraform | undefined;

/** PATH without the simulation's fake terraform: what the agent gets to run the real binary. */
export const realPath = () =>
  (process.env.PATH ?? '')
    .split(':')
    .filter((d) => d !== FAKE_TERRAFORM_DIR && !d.endsWith('simulation/bin'))
    .join(':');

export function realTerraform(): RealTerraform {
  if (found) return found;
  try {
    const out = execFileSync('terraform', ['version', '-json'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, PATH: realPath(), CHECKPOINT_DISABLE: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const v = (JSON.parse(out) as { terraform_version?: string }).terraform_version;
    found = v
      ? { ok: true, version: v }
      : { ok: false, reason: '`terraform version -json` names no version' };
  } catch (e) {
    found = { ok: false, reason: `no terraform on PATH (${(e as Error).message.split('\n')[0]})` };
  }
  return found;
}

/**
 * `describe` for end-to-end tests on the real binary: they run where `terraform` is on PATH; elsewhere
 * they are skipped with the reason in the suite's name, and with `DRIFTLINE_REQUIRE_TERRAFORM=1` (CI)
 * a missing binary is a failing test instead of a skip.
 */
export function describeRealTerraform(name: string, body: (version: string) => void): void {
  const t = realTerraform();
  if (t.ok) describe(`${name} (terraform ${t.version})`, () => body(t.version));
  else if (process.env.DRIFTLINE_REQUIRE_TERRAFORM === '1')
    describe(name, () => {
      it('needs the real terraform (DRIFTLINE_REQUIRE_TERRAFORM=1)', () => {
        throw new Error(
          `${t.reason}: install Terraform (see the README) or unset DRIFTLINE_REQUIRE_TERRAFORM`,
        );
      });
    });
  else
    describe.skip(`${name} (skipped: ${t.reason}; set DRIFTLINE_REQUIRE_TERRAFORM=1 to fail instead)`, () =>
      body(''));
}
