import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { World } from './World.js';

/**
 * Quiet rounds as heartbeats (docs/decisions/500-heartbeat-rebuilds-the-change.md), in the world (decision
 * 540): an agent on hop v2 whose two cells are re-planned every 4 s and never change. Its first quiet round
 * goes as the heartbeat change's bytes; the hub's ack says it rebuilds heartbeats (the agent keeps that in
 * its state file); every later quiet round goes as a heartbeat the hub rebuilds into the agent's own
 * change: none refused, the cells' plan times keep moving at the hub, nothing unacknowledged.
 */
describe('an agent on hop v2 re-planning quiet cells, in the world', () => {
  let world: World;
  beforeAll(async () => {
    world = new World({
      seed: 500,
      sites: 1,
      oneWayMs: 0,
      contact: null,
      schedule: '*/4 * * * * *',
      // the same clean plan every time: each re-plan after the first is unchanged
      scenario: 'seed: 5\nloop: false\nsteps:\n  - { state: clean }\n',
      // no jitter and a short record window: each round is written before the next starts (a round
      // under way holds its confirmations, decision 370)
      agentSync: { wire: 2, jitterS: 0, recordWindowS: 1, intervalS: 2 },
    });
    await world.start();
  });
  afterAll(async () => {
    await world?.close();
  });

  const heartbeats = async (outcome: string) => {
    const text = (await world.hubCall('/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`hub_heartbeats_total{outcome="${outcome}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  const plannedAt = async () => {
    const m = await world.hubApi<{ cells: { component: string; plannedAt: string | null }[] }>(
      '/api/matrix?site=site-001',
    );
    return ['stack-0', 'stack-1'].map(
      (c) => Date.parse(m.cells.find((x) => x.component === c)?.plannedAt ?? '') || 0,
    );
  };
  /** Looks every second of world time until `f` holds, at most `withinMs`. */
  async function lookUntil(f: () => Promise<boolean>, withinMs: number): Promise<boolean> {
    const end = Date.now() + withinMs;
    while (Date.now() <= end) {
      if (await f()) return true;
      await world.run(1000);
    }
    return false;
  }

  it('sends them as heartbeats the hub rebuilds, and the cells keep their age', async () => {
    expect(await lookUntil(async () => (await heartbeats('rebuilt')) >= 2, 180_000)).toBe(true);
    expect(await heartbeats('refused')).toBe(0);
    // the agent knows its hub rebuilds them, across a restart too
    const site = world.sites[0];
    if (!site) throw new Error('no site');
    expect(JSON.parse(readFileSync(join(site.dir, 'data', 'wire2-state.json'), 'utf8'))).toMatchObject({
      heartbeats: true,
    });
    // the cells' plan times move with each heartbeat: every cell planned again since, by heartbeats only
    const before = await plannedAt();
    const rebuilt = await heartbeats('rebuilt');
    expect(
      await lookUntil(async () => (await plannedAt()).every((t, i) => t > (before[i] ?? 0)), 60_000),
    ).toBe(true);
    expect(await heartbeats('rebuilt')).toBeGreaterThan(rebuilt);
    expect(await heartbeats('refused')).toBe(0);
    // and every run is acknowledged: the agent holds nothing the hub has not committed
    const storage = site.agent?.storage;
    if (!storage) throw new Error('no agent');
    const unacked = () =>
      storage.epochs('unpruned').reduce((n, e) => n + storage.unackedRuns(e.epoch).length, 0);
    expect(await lookUntil(async () => unacked() === 0, 60_000)).toBe(true);
    expect(await heartbeats('refused')).toBe(0);
  });
});
