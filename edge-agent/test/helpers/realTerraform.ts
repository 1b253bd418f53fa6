import { execFileSync } from 'node:child_process';
import { describe, it } from 'vitest';

/** Where the real binary is looked for: PATH as the test runs, never the simulation's fake. */
export type RealTerraform = { ok: true; version: string } | { ok: false; reason: string };

let found: RealTerraform | undefined;

/** The real `terraform` on PATH and its version, or why there is none (asked once per test file). */
export function realTerraform(): RealTerraform {
  if (found) return found;
  try {
    const out = execFileSync('terraform', ['version', '-json'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, CHECKPOINT_DISABLE: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const v = (JSON.parse(out) as { terraform_version?: string }).terraform_version;
    // The simulation's fake answers `version` too, with a platform but no real build behind it.
    if (process.env.PATH?.split(':').some((d) => d.endsWith('simulation/bin')))
      found = { ok: false, reason: 'PATH puts the simulation fake first; run without it' };
    else
      found = v
        ? { ok: true, version: v }
        : { ok: false, reason: '`terraform version -json` names no version' };
  } catch (e) {
    found = { ok: false, reason: `no terraform on PATH (${(e as Error).message.split('\n')[0]})` };
  }
  return found;
}

/**
 * `describe` for tests on the real binary: they run where `terraform` is on PATH; elsewhere they are
 * skipped with the reason in the suite's name, and with `DRIFTLINE_REQUIRE_TERRAFORM=1` (CI) a missing
 * binary is a failing test instead of a skip.
 */
export function describeRealTerraform(name: string, body: () => void): void {
  const t = realTerraform();
  if (t.ok) describe(`${name} (terraform ${t.version})`, body);
  else if (process.env.DRIFTLINE_REQUIRE_TERRAFORM === '1')
    describe(name, () => {
      it('needs the real terraform (DRIFTLINE_REQUIRE_TERRAFORM=1)', () => {
        throw new Error(
          `${t.reason}: install Terraform (see the README) or unset DRIFTLINE_REQUIRE_TERRAFORM`,
        );
      });
    });
  else
    describe.skip(`${name} (skipped: ${t.reason}; set DRIFTLINE_REQUIRE_TERRAFORM=1 to fail instead)`, body);
}
