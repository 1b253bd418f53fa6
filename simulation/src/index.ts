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
export { type LinkConfig, type LinkHandle, resolveSettings, startLink } from './link.js';
