import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProgram } from '../src/topology/programs.js';
import { Topology } from '../src/topology/Topology.js';
import { until } from './support.js';

/**
 * Quiet rounds as heartbeats (docs/decisions/500-heartbeat-rebuilds-the-change.md), as real processes: a
 * hub, a relay and an agent on hop v2 whose cells are re-planned every 4 s and never change. Its first
 * quiet round goes as the heartbeat change's bytes; the hub's ack says it rebuilds heartbeats (the agent
 * keeps that in its state file); every later quiet round goes as a heartbeat the hub rebuilds into the
 * agent's own change: none refused, the cells' plan times keep moving at the hub, nothing unacknowledged.
 */
const ENVIRONMENTS = ['prod', 'staging'];
const COMPONENTS = [{ name: 'network', environments: ENVIRONMENTS, schedule: '*/4 * * * * *' }];

describe('an agent on hop v2 re-planning quiet cells', { timeout: 300_000 }, () => {
  let topo: Topology;

  beforeAll(async () => {
    topo = await Topology.start({
      dir: mkdtempSync(join(tmpdir(), 'driftline-heartbeat-')),
      relayLink: { profile: 'lan', timeScale: 1 },
      sites: [
        {
          site: 'quiet-ship',
          agent: 'a1',
          profile: 'lan',
          timeScale: 1,
          components: COMPONENTS,
          // no jitter and a short record window: each round is written before the next starts (a round
          // under way holds its confirmations, decision 370)
          agentSync: { wire: 2, jitterS: 0, recordWindowS: 1 },
        },
      ],
      agentSyncIntervalS: 2,
      // the same clean plan every time: each re-plan after the first is unchanged
      fastPlans: 'quiet',
    });
  }, 180_000);

  afterAll(async () => {
    await topo?.stop();
  }, 120_000);

  it('sends them as heartbeats the hub rebuilds, and the cells keep their age', async () => {
    const heartbeats = async (outcome: string) => {
      const text = await fetch(`${topo.hubUrl}/metrics`, { headers: topo.authHeaders }).then((r) => r.text());
      const line = text.split('\n').find((l) => l.startsWith(`hub_heartbeats_total{outcome="${outcome}"}`));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    await until(
      'the hub to rebuild two heartbeats',
      async () => (await heartbeats('rebuilt')) >= 2,
      180_000,
      1000,
    );
    expect(await heartbeats('refused')).toBe(0);
    // the agent knows its hub rebuilds them, across a restart too
    const dataDir = join(dirname(topo.layout.agentConfig('quiet-ship')), 'data');
    expect(JSON.parse(readFileSync(join(dataDir, 'wire2-state.json'), 'utf8'))).toMatchObject({
      heartbeats: true,
    });
    // the cells' plan times move with each heartbeat: a cell planned a round ago, not at start
    const plannedAt = async () => {
      const m = (await fetch(`${topo.hubUrl}/api/matrix?site=quiet-ship`, { headers: topo.authHeaders }).then(
        (r) => r.json(),
      )) as { cells: { environment: string; plannedAt: string | null }[] };
      return ENVIRONMENTS.map(
        (e) => Date.parse(m.cells.find((c) => c.environment === e)?.plannedAt ?? '') || 0,
      );
    };
    const before = await plannedAt();
    const rebuilt = await heartbeats('rebuilt');
    await until('one more heartbeat', async () => (await heartbeats('rebuilt')) > rebuilt, 60_000, 500);
    const after = await plannedAt();
    expect(after.every((t, i) => t > (before[i] ?? 0))).toBe(true);
    // and every run is acknowledged: the agent holds nothing the hub has not committed
    await until(
      'the agent to hold no unacknowledged run',
      async () => (await agentStatus(topo)).unackedRuns === 0,
      60_000,
      1000,
    );
    expect(await heartbeats('refused')).toBe(0);
  });
});

async function agentStatus(topo: Topology): Promise<{ unackedRuns: number }> {
  const config = topo.layout.agentConfig('quiet-ship');
  return JSON.parse(
    await runProgram('agent', ['status', '--config', config, '--json'], { cwd: dirname(config) }),
  );
}
