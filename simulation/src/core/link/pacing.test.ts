import { describe, expect, it } from 'vitest';
import { seededRandom } from '../rng.js';
import { paceChunk, START_PACE } from './pacing.js';
import { DirectionSettingsSchema } from './settings.js';

const dir = (d: object) => DirectionSettingsSchema.parse(d);

describe('paceChunk', () => {
  it('adds the one-way delay', () => {
    const r = paceChunk(START_PACE, 100, 1000, dir({ delayMs: 250 }), Math.random);
    expect(r.arrival).toBe(1250);
  });

  it('serialises back-to-back chunks at the bandwidth cap', () => {
    const d = dir({ bandwidthBps: 8000 }); // 1000 bytes per second
    let state = START_PACE;
    const arrivals: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = paceChunk(state, 500, 0, d, Math.random);
      state = r.state;
      arrivals.push(r.arrival);
    }
    expect(arrivals).toEqual([500, 1000, 1500]);
  });

  it('never lets a later chunk overtake an earlier one under jitter', () => {
    const d = dir({ delayMs: 10, jitterMs: 500 });
    const random = seededRandom(42);
    let state = START_PACE;
    let last = 0;
    for (let t = 0; t < 1000; t += 3) {
      const r = paceChunk(state, 10, t, d, random);
      expect(r.arrival).toBeGreaterThanOrEqual(last);
      expect(r.arrival).toBeGreaterThanOrEqual(t + 10);
      last = r.arrival;
      state = r.state;
    }
  });
});
