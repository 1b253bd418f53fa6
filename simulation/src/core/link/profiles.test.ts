import { describe, expect, it } from 'vitest';
import { PROFILE_NAMES, PROFILES, profileSettings, scaleSettings } from './profiles.js';

describe('profiles', () => {
  it('has the six named links of the design', () => {
    expect([...PROFILE_NAMES].sort()).toEqual(['flaky', 'geo', 'lan', 'leo-windows', 'mars', 'polar']);
  });

  it('gives geo a ~600 ms round trip at 1 Mbit/s', () => {
    const g = PROFILES.geo!.settings;
    expect(g.uplink.delayMs + g.downlink.delayMs).toBe(600);
    expect(g.uplink.bandwidthBps).toBe(1_000_000);
  });

  it('gives leo-windows 10 min passes every 95 min and mars 4-24 min one way', () => {
    expect(PROFILES['leo-windows']!.settings.schedule).toMatchObject({ upMs: 600_000, periodMs: 5_700_000 });
    const mars = PROFILES.mars!.oneWayDelayMs;
    expect(mars).toBeGreaterThanOrEqual(4 * 60_000);
    expect(mars).toBeLessThanOrEqual(24 * 60_000);
    const polar = PROFILES.polar!.settings.schedule!;
    expect(polar.periodMs - polar.upMs).toBeGreaterThanOrEqual(12 * 3_600_000);
    expect(PROFILES.flaky!.settings.resetsPerMin).toBeGreaterThan(0);
  });

  it('divides delays and windows by the time scale and multiplies event rates', () => {
    const s = scaleSettings(PROFILES.flaky!.settings, 10);
    expect(s.uplink.delayMs).toBe(8);
    expect(s.uplink.stallMs).toBe(400);
    expect(s.uplink.stallsPerMin).toBe(30);
    expect(s.resetsPerMin).toBe(10);
    expect(s.uplink.bandwidthBps).toBe(2_000_000);
    const polarDay = profileSettings('polar', 1440);
    expect(polarDay.ok && polarDay.settings.schedule!.periodMs).toBe(60_000);
  });

  it('names the profiles when asked for an unknown one', () => {
    const r = profileSettings('moon');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problem).toMatch(/unknown profile 'moon'; choose one of: lan, geo/);
  });

  it('refuses a time scale that is not positive', () => {
    expect(() => scaleSettings(PROFILES.geo!.settings, 0)).toThrow(/positive/);
  });
});
