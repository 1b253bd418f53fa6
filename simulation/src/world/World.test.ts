import { afterEach, describe, expect, it } from 'vitest';
import { World } from './World.js';

const HOUR = 3_600_000;

/**
 * The whole chain in one process on virtual time (docs/decisions/540-deterministic-world.md): agents plan on
 * their schedules, push through a relay over light-delayed links that are up two hours in six, and the hub
 * commits every run, exactly, with nothing waiting on the wall clock.
 */
describe('the world', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('carries every run two sites record over six hours to the hub, none lost or made up', async () => {
    world = new World({ seed: 7, sites: 2 });
    await world.start();
    await world.run(6 * HOUR);
    const end = Date.now();
    const before = world.ledger.figures(end);
    // windows two hours in six: some runs of the last hours wait for their site's next window
    expect(before.lost).toBeGreaterThan(0);
    world.openAllLinks();
    const w = world;
    expect(await world.until(() => w.ledger.figures(end).lost === 0, 6 * HOUR)).toBe(true);
    const f = world.ledger.figures(end);
    // hourly plans of two cells at two sites
    expect(f.recorded).toBeGreaterThanOrEqual(2 * 2 * 5);
    expect(f).toMatchObject({ lost: 0, unknown: 0 });
    // a run's age at the hub is bounded by the windows: at most a window's gap and a round trip or two
    expect(f.maxAgeMs).toBeLessThan(5 * HOUR);
  });
});
