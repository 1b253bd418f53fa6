import { describe, expect, it } from 'vitest';
import { ClockFaults } from './clockFaults.js';
import { DiskFaults, RELAY_MAX_BYTES } from './diskFaults.js';
import { WORLD_START, World } from './World.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/**
 * The `disk` and `clock` faults (docs/decisions/540-deterministic-world.md): the relay loses its blob folder
 * with a blob in it and its disk is full for 40 minutes; one agent's clock jumps 3 h ahead then is skewed,
 * the other's is 90 min ahead for 3 h. Nothing recorded is lost, nothing made up, the lost blob reaches the
 * hub, the relay takes custody again after its disk is freed, and the hub dates the agents' runs (whether
 * each date is within its stated uncertainty is counted: see the note at its assertion). One world: that a
 * world replays its seed is `worldReplay`'s to show (these faults draw from the seed as the links do).
 */
async function faultyWorld(seed: number) {
  const t0 = WORLD_START;
  const clock = new ClockFaults(
    new Map([
      [
        'site-001',
        [
          { kind: 'step' as const, from: t0 + 2 * HOUR, to: t0 + 5 * HOUR, offsetMs: 3 * HOUR, rate: 0 },
          { kind: 'skew' as const, from: t0 + 6 * HOUR, to: t0 + 8 * HOUR, offsetMs: 0, rate: 0.01 },
        ],
      ],
      [
        'site-002',
        [{ kind: 'step' as const, from: t0 + 3 * HOUR, to: t0 + 6 * HOUR, offsetMs: 90 * MIN, rate: 0 }],
      ],
    ]),
  );
  const world = new World({
    seed,
    sites: 2,
    contact: null,
    agentNow: (s) => clock.now(s),
    relayMaxBytes: RELAY_MAX_BYTES,
    keyedRelay: true,
  });
  clock.watch(world);
  const disk = new DiskFaults(world);
  try {
    await world.start();
    await world.run(HOUR);
    disk.arm();
    await world.run(2 * HOUR);
    disk.fill(40 * MIN);
    await world.run(7 * HOUR);
    const end = Date.now();
    world.openAllLinks();
    const drained = await world.until(() => world.ledger.figures(end).lost === 0, 12 * HOUR);
    const blobsBack = await disk.drain(12 * HOUR);
    await clock.settled();
    return {
      drained,
      blobsBack,
      figures: world.ledger.figures(end),
      losses: disk.losses.length,
      lostBlobs: disk.losses.flatMap((l) => l.blobs).length,
      uploadsAfterLoss: disk.uploadsAfterLoss,
      fulls: disk.fulls.map((f) => ({ refused: f.refused, tookAgain: f.tookAgainAt !== null })),
      episodes: clock.begun(end).count,
      ages: clock.ages,
    };
  } finally {
    await world.close();
  }
}

describe('a world whose relay loses its disk and whose agents lose their clocks', () => {
  it('loses nothing, brings the lost blob to the hub, recovers from the full disk, and counts how the hub dates runs of agents whose clocks lie', async () => {
    const one = await faultyWorld(31);
    expect(one.figures.recorded).toBeGreaterThan(0);
    expect(one.drained).toBe(true);
    expect(one.figures).toMatchObject({ lost: 0, unknown: 0 });
    // the folder went with a blob in it; the blob reached the hub, and the relay took uploads after
    expect(one.losses).toBe(1);
    expect(one.lostBlobs).toBeGreaterThan(0);
    expect(one.blobsBack).toBe(true);
    expect(one.uploadsAfterLoss).toBeGreaterThan(0);
    // the relay took custody again once its disk was freed (what it refused while full is counted, not
    // asserted: the store reuses its free pages, so a relay that forwards at once refused nothing here)
    expect(one.fulls).toHaveLength(1);
    expect(one.fulls[0]?.tookAgain).toBe(true);
    // three clock episodes; every run the hub dated was within its stated uncertainty, or flagged
    expect(one.episodes).toBe(3);
    expect(one.ages.checked).toBeGreaterThan(0);
    // Not asserted yet: `ages.wrong` is 0. Runs stamped under one clock and pushed after it changed are
    // still dated with the clock at the push, outside the stated uncertainty and not marked held
    // (docs/decisions/550-clock-moved-since-its-sample.md, "Left"): to be asserted once the agent states
    // how far its clock moved since the oldest change it carries.
  });
});
