import { describe, expect, it } from 'vitest';
import { World } from './World.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/**
 * The `crash` fault (docs/decisions/540-deterministic-world.md): a node goes down without warning, what
 * was under way with it cut both ways, and starts again from its files. Custody is on disk, so nothing
 * recorded is lost and nothing is made up; and a seed with crashes replays like any other.
 */
async function crashedWorld(seed: number) {
  // links up throughout: the agents' held pulls are open at the relay when it goes down
  const world = new World({
    seed,
    sites: 2,
    contact: null,
    faults: { lossRate: 0.02, answerLossRate: 0.02, duplicateRate: 0.02 },
  });
  try {
    await world.start();
    await world.run(HOUR);
    // each node once, the relay and an agent at once, the hub while the relay is catching up
    const crashes = [world.crash('relay-1', 40 * MIN), world.crash('site-001', 25 * MIN)];
    await world.run(10 * MIN);
    crashes.push(world.crash('hub', 30 * MIN));
    await world.run(2 * HOUR);
    await Promise.all(crashes);
    const end = Date.now();
    world.openAllLinks();
    const drained = await world.until(() => world.ledger.figures(end).lost === 0, 12 * HOUR);
    return {
      drained,
      figures: world.ledger.figures(end),
      crashes: { ...world.crashes },
      cut: world.net.counts.cut,
      digest: world.digest(),
    };
  } finally {
    await world.close();
  }
}

describe('a world whose nodes crash', () => {
  it('loses nothing recorded and makes nothing up when the relay, an agent and the hub go down and come back', async () => {
    const one = await crashedWorld(21);
    expect(one.crashes).toEqual({ count: 3, failed: [] });
    expect(one.cut).toBeGreaterThan(0); // held pulls and rounds under way at the crashes, ended as resets
    expect(one.figures.recorded).toBeGreaterThan(0);
    expect(one.drained).toBe(true);
    expect(one.figures).toMatchObject({ lost: 0, unknown: 0 });
    const again = await crashedWorld(21);
    expect(again.digest).toBe(one.digest);
  });
});
