import { describe, it } from 'vitest';
import { realTool } from '../terraform/tools.js';

/**
 * `describe` for tests on the real binary (the Terraform contract's `realTool` finds it on PATH, never
 * the simulation's fake): they run where `terraform` is there; elsewhere they are skipped with the
 * reason in the suite's name, and with `DRIFTLINE_REQUIRE_TERRAFORM=1` (.ci/run) a missing binary is a
 * failing test instead of a skip.
 */
export function describeRealTerraform(name: string, body: () => void): void {
  const t = realTool('terraform').found;
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
