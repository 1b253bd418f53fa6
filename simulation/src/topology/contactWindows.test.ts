import { lastWindowOf, parseWindows } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { profileSettings } from '../core/link/profiles.js';
import { scheduledUp } from '../core/link/schedule.js';
import { linkContactWindows } from './contactWindows.js';

const T0 = Date.parse('2026-11-27T00:00:00Z');

describe('the windows a site on a scheduled link declares', () => {
  it('are the link schedule itself: up exactly when a declared window is open', () => {
    for (const [name, scale] of [
      ['polar', 360],
      ['mars', 60],
      ['leo-windows', 1],
    ] as const) {
      const p = profileSettings(name, scale);
      if (!p.ok) throw new Error(p.problem);
      const start = T0 + 1234;
      const windows = linkContactWindows(p.settings, start);
      expect(windows).toHaveLength(1);
      const specs = parseWindows(windows);
      const period = p.settings.schedule?.periodMs ?? 0;
      for (let e = 0; e < 3 * period; e += period / 97) {
        const t = Math.round(start + e);
        const w = lastWindowOf(specs, t);
        const open = w !== null && t < w.end;
        expect(open, `${name} at ${e} ms`).toBe(scheduledUp(p.settings.schedule, t - start));
      }
    }
    const polar = profileSettings('polar', 360);
    if (polar.ok)
      expect(linkContactWindows(polar.settings, T0)).toEqual([
        'every 4m for 40s from 2026-11-27T00:00:00.000Z',
      ]);
  });

  it('are none for a link that is always up', () => {
    const lan = profileSettings('lan');
    expect(lan.ok && linkContactWindows(lan.settings, T0)).toEqual([]);
  });
});
