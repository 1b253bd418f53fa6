export type { ForcedState, LinkStats } from './adapters/net/LinkProxy.js';
export {
  PROFILE_NAMES,
  PROFILES,
  type Profile,
  profileSettings,
  scaleSettings,
} from './core/link/profiles.js';
export { describeSchedule, msUntilChange, scheduledUp } from './core/link/schedule.js';
export {
  type DirectionSettings,
  type LinkSettings,
  type LinkSettingsInput,
  LinkSettingsSchema,
  type Schedule,
} from './core/link/settings.js';
export { parseArgs as parseTerraformArgs } from './core/terraform/args.js';
export { buildPlan, type PlanInput } from './core/terraform/planJson.js';
export { FIXED_TIMESTAMP, planOutcome, showOutcome } from './core/terraform/run.js';
export {
  DEFAULT_SCENARIO,
  FAKE_STATES,
  type FakeState,
  parseScenario,
  pickStep,
  type Scenario,
  ScenarioSchema,
} from './core/terraform/scenario.js';
export { type LinkConfig, type LinkHandle, resolveSettings, startLink } from './link.js';

/** Absolute path of the fake `terraform` executable: prepend its directory to PATH, or run it directly. */
export const FAKE_TERRAFORM_BIN = new URL('../bin/terraform', import.meta.url).pathname;
export { hashText, type Random, seededRandom } from './core/rng.js';
export { freePort, waitForHttp } from './topology/ports.js';
export { BINS, FAKE_TERRAFORM_DIR, runProgram } from './topology/programs.js';
