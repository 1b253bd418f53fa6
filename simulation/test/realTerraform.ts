/**
 * The real-terraform helpers the simulation's end-to-end tests share with the agent's: `realPath` (PATH
 * without the simulation's fake) and `describeRealTerraform` (run where `terraform` is on PATH, else skip
 * with the reason, or fail under `DRIFTLINE_REQUIRE_TERRAFORM=1`).
 */
export { describeRealTerraform, realPath } from '@driftline/edge-agent/testing';
