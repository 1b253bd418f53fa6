import { describe, expect, it } from 'vitest';
import { OverdueWatch } from './overdueWatch.js';
import { World } from './World.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** A site whose agent keeps (or misses) its windows, looked at by the operator every 30 minutes for `ms`. */
async function looked(seed: number, missAWindow: boolean) {
  const world = new World({
    seed,
    sites: 1,
    components: 1,
    oneWayMs: MIN,
    contact: { periodMs: 2 * HOUR, upMs: 30 * MIN },
    hub: { contactPlans: { graceS: 120 } },
  });
  const watch = new OverdueWatch(world);
  try {
    await world.start();
    watch.schedule(12 * HOUR);
    await world.run(4 * HOUR);
    // the agent gone for two of its windows: the hub must say so
    if (missAWindow) void world.crash('site-001', 4 * HOUR);
    await world.run(8 * HOUR);
    return watch.invariants(true)[0];
  } finally {
    await world.close();
  }
}

describe('no site overdue while its windows are met (the operator looks every 30 minutes)', () => {
  it('holds for a site that keeps every window', async () => {
    const held = await looked(581, false);
    expect(held?.held).toBe(true);
    expect(held?.detail).toMatch(/0 called overdue or unreachable/);
  });

  it('breaks where the site misses its windows: the look sees it overdue', async () => {
    const missed = await looked(581, true);
    expect(missed?.held).toBe(false);
    expect(missed?.detail).toMatch(/site-001 (overdue|unreachable) at/);
  });
});
