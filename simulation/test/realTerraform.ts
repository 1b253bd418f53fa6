import { describe, it } from 'vitest';
import { realPath, realTool } from '../../edge-agent/test/terraform/tools.js';

/** PATH without the simulation's fake terraform: what an agent gets to run the real binary. */
export { realPath };

/**
 * `describe` for end-to-end tests on the real binary (found as the Terraform contract finds it): they
 * run where `terraform` is on PATH; elsewhere they are skipped with the reason in the suite's name, and
 * with `DRIFTLINE_REQUIRE_TERRAFORM=1` (.ci/run) a missing binary is a failing test instead of a skip.
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
