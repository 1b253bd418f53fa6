import { describe, expect, it } from 'vitest';
import { mergeSettings, parseSettings } from './settings.js';

const base = () => {
  const r = parseSettings({});
  if (!r.ok) throw new Error('defaults must parse');
  return r.settings;
};

describe('link settings', () => {
  it('fills every default from an empty object', () => {
    const s = base();
    expect(s.uplink).toEqual({ delayMs: 0, jitterMs: 0, bandwidthBps: null, stallsPerMin: 0, stallMs: 0 });
    expect(s.whenDown).toBe('refuse');
    expect(s.schedule).toBeNull();
  });

  it('merges one direction without touching the other', () => {
    const r = mergeSettings(base(), { uplink: { delayMs: 40 } });
    expect(r.ok && r.settings.uplink.delayMs).toBe(40);
    expect(r.ok && r.settings.downlink.delayMs).toBe(0);
  });

  it('names every invalid field and refuses unknown ones', () => {
    const r = mergeSettings(base(), { uplink: { delayMs: -5 }, whenDown: 'explode', colour: 'red' });
    expect(r.ok).toBe(false);
    const text = !r.ok ? r.problems.join('\n') : '';
    expect(text).toMatch(/uplink\.delayMs/);
    expect(text).toMatch(/whenDown/);
    expect(text).toMatch(/colour/);
  });

  it('refuses a window longer than its period', () => {
    const r = parseSettings({ schedule: { upMs: 10, periodMs: 5 } });
    expect(!r.ok && r.problems.join()).toMatch(/upMs must not exceed/);
  });

  it('refuses a body that is not an object', () => {
    expect(mergeSettings(base(), [1, 2]).ok).toBe(false);
  });
});
