/**
 * What other packages' tests may use of the agent's test helpers (package export
 * `@driftline/edge-agent/testing`), instead of reaching into `test/` and `src/` by path
 * (docs/decisions/280-one-place-per-decision.md).
 */
export { writeZip, type ZipEntry } from '../src/adapters/providers/testZip.js';
export { describeRealTerraform } from './helpers/realTerraform.js';
export { realPath } from './terraform/tools.js';
