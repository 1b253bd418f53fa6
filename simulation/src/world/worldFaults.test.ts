import { describe, expect, it } from 'vitest';
import { runWorld } from './runWorld.js';

/** The world's link faults against the delivery guarantee (docs/decisions/540-deterministic-world.md). */
describe('a world with faults', () => {
  it('loses nothing to lost requests, lost answers and duplicates on every link', async () => {
    const r = await runWorld({ seed: 5, sites: 2, days: 0.25, faults: ['links'] });
    expect(r.network.lost).toBeGreaterThan(0);
    expect(r.network.duplicated).toBeGreaterThan(0);
    expect(r.invariants.filter((i) => !i.held)).toEqual([]);
  });
});
