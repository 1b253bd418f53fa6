import { describe, expect, it } from 'vitest';
import { runWorld } from './runWorld.js';

/** A seed replays (docs/decisions/540-deterministic-world.md): the same run, event for event, on any load. */
describe('a world run', () => {
  it('replays: one seed gives one digest, another seed another', async () => {
    const one = await runWorld({ seed: 11, sites: 2, days: 0.25, faults: [] });
    const again = await runWorld({ seed: 11, sites: 2, days: 0.25, faults: [] });
    const other = await runWorld({ seed: 12, sites: 2, days: 0.25, faults: [] });
    expect(one.replayable).toBe(true);
    expect(one.held).toBe(true);
    expect(again.digest).toBe(one.digest);
    expect(again.steps).toBe(one.steps);
    expect(other.digest).not.toBe(one.digest);
  });
});
