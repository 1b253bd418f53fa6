import type { DirectionSettings, LinkSettings } from './settings.js';
import { LinkSettingsSchema } from './settings.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const MBIT = 1_000_000;

/** A named link, in real (uncompressed) time. */
export interface Profile {
  name: string;
  description: string;
  /** The nominal one-way delay, as scenario reports state it (`oneWayDelayMs`). */
  oneWayDelayMs: number;
  settings: LinkSettings;
}

function dir(d: Partial<DirectionSettings>): DirectionSettings {
  return { delayMs: 0, jitterMs: 0, bandwidthBps: null, stallsPerMin: 0, stallMs: 0, ...d };
}

function profile(name: string, description: string, s: Partial<LinkSettings>): Profile {
  const settings = LinkSettingsSchema.parse(s);
  return { name, description, oneWayDelayMs: settings.uplink.delayMs, settings };
}

/**
 * The named links of docs/architecture.md#simulation. Numbers are typical, not any one operator's:
 * GEO ≈ 600 ms round trip through a 36,000 km orbit; a LEO relay pass ≈ 10 min every ≈ 95 min orbit;
 * a polar station sees its GEO satellite a few hours a day; Earth–Mars light time is 4–24 min one way.
 */
export const PROFILES: Record<string, Profile> = {
  lan: profile('lan', 'local network: no delay, no cap, always up', {}),
  geo: profile('geo', 'geostationary satellite: ~600 ms round trip, 1 Mbit/s, small jitter', {
    uplink: dir({ delayMs: 300, jitterMs: 20, bandwidthBps: 1 * MBIT }),
    downlink: dir({ delayMs: 300, jitterMs: 20, bandwidthBps: 1 * MBIT }),
  }),
  'leo-windows': profile('leo-windows', 'low-orbit relay: 10 min passes every 95 min; hangs between passes', {
    uplink: dir({ delayMs: 30, jitterMs: 10, bandwidthBps: 10 * MBIT }),
    downlink: dir({ delayMs: 30, jitterMs: 10, bandwidthBps: 10 * MBIT }),
    schedule: { upMs: 10 * MIN, periodMs: 95 * MIN, offsetMs: 0 },
    whenDown: 'hang',
  }),
  polar: profile('polar', 'polar station: GEO link visible 4 h a day, 20 h outage; refused while down', {
    uplink: dir({ delayMs: 300, jitterMs: 40, bandwidthBps: 0.5 * MBIT }),
    downlink: dir({ delayMs: 300, jitterMs: 40, bandwidthBps: 0.5 * MBIT }),
    schedule: { upMs: 4 * HOUR, periodMs: 24 * HOUR, offsetMs: 0 },
    whenDown: 'refuse',
  }),
  mars: profile('mars', 'Mars: 12 min one way (4-24 min over the synodic cycle), 8 h contact per sol', {
    uplink: dir({ delayMs: 12 * MIN, bandwidthBps: 0.25 * MBIT }),
    downlink: dir({ delayMs: 12 * MIN, bandwidthBps: 2 * MBIT }),
    schedule: { upMs: 8 * HOUR, periodMs: 24 * HOUR + 40 * MIN, offsetMs: 0 },
    whenDown: 'hang',
  }),
  flaky: profile('flaky', 'bad terrestrial/radio link: resets, stalls (what loss looks like under TCP)', {
    uplink: dir({ delayMs: 80, jitterMs: 150, bandwidthBps: 2 * MBIT, stallsPerMin: 3, stallMs: 4000 }),
    downlink: dir({ delayMs: 80, jitterMs: 150, bandwidthBps: 2 * MBIT, stallsPerMin: 3, stallMs: 4000 }),
    resetsPerMin: 1,
  }),
};

export const PROFILE_NAMES = Object.keys(PROFILES);

/**
 * Compresses a profile's time by `timeScale`: delays, jitter, stall lengths and windows are divided by
 * it, event rates (resets, stalls per minute) multiplied. Bandwidth is left alone: a compressed link
 * carries fewer bytes per window, which only makes a scenario harsher (decision 030).
 */
export function scaleSettings(s: LinkSettings, timeScale: number): LinkSettings {
  if (!(timeScale > 0)) throw new Error(`time scale must be a positive number, got ${timeScale}`);
  const d = (x: DirectionSettings): DirectionSettings => ({
    ...x,
    delayMs: x.delayMs / timeScale,
    jitterMs: x.jitterMs / timeScale,
    stallMs: x.stallMs / timeScale,
    stallsPerMin: x.stallsPerMin * timeScale,
  });
  return {
    ...s,
    uplink: d(s.uplink),
    downlink: d(s.downlink),
    resetsPerMin: s.resetsPerMin * timeScale,
    schedule: s.schedule && {
      upMs: s.schedule.upMs / timeScale,
      periodMs: s.schedule.periodMs / timeScale,
      offsetMs: s.schedule.offsetMs / timeScale,
    },
  };
}

/** The settings of a named profile at a time scale, or the list of names when it is unknown. */
export function profileSettings(
  name: string,
  timeScale = 1,
): { ok: true; settings: LinkSettings; oneWayDelayMs: number } | { ok: false; problem: string } {
  const p = PROFILES[name];
  if (!p)
    return { ok: false, problem: `unknown profile '${name}'; choose one of: ${PROFILE_NAMES.join(', ')}` };
  return {
    ok: true,
    settings: scaleSettings(p.settings, timeScale),
    oneWayDelayMs: p.oneWayDelayMs / timeScale,
  };
}
