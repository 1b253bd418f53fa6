import { describe, it } from 'vitest';
import { runTerraformContract } from './contract.js';
import { runIssue43Contract } from './contractIssue43.js';
import { realTool, required } from './tools.js';

// The Terraform contract against real binaries on PATH: terraform, and OpenTofu's tofu when present.
// Missing, a binary's suite is skipped with the reason; required (DRIFTLINE_REQUIRE_TERRAFORM=1, set by
// .ci/run wherever terraform is on PATH), a missing or unusable binary fails instead.
for (const name of ['terraform', 'tofu'] as const) {
  const tool = realTool(name);
  if (tool.found.ok)
    describe(`Terraform contract: ${name} ${tool.found.version}`, () => {
      runTerraformContract(tool);
      runIssue43Contract(tool);
    });
  else if (required(tool))
    describe(`Terraform contract: ${name}`, () => {
      it(`needs ${name} (required here)`, () => {
        throw new Error(
          `${tool.found.ok ? '' : tool.found.reason}: install ${name} or unset the DRIFTLINE_REQUIRE_ variable`,
        );
      });
    });
  else {
    const reason = tool.found.reason;
    describe.skip(`Terraform contract: ${name} (skipped: ${reason})`, () => runTerraformContract(tool));
    console.log(`Terraform contract: ${name} skipped: ${reason}`);
  }
}
