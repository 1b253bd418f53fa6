import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { RunsResponse } from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProgram } from '../src/topology/programs.js';
import { Topology } from '../src/topology/Topology.js';
import { until } from './support.js';

/**
 * Issue 46's mixed fleet (docs/decisions/495-hop-v2-on-the-agent-link.md), as real processes: one relay,
 * a v1 agent and a v2 agent (`sync.wire: 2`) behind it, each over a flaky link (resets and stalls: what
 * loss looks like under TCP), every cell re-planned each minute. Both sites' results all reach the hub
 * and every one is acknowledged back (nothing pending at either agent); the v2 agent spoke `/v2` to the
 * relay and never posted a v1 batch, the v1 agent never spoke `/v2`.
 */
const SITES = ['old-ship', 'new-ship'];
const COMPONENTS = [{ name: 'network', environments: ['prod', 'staging'], schedule: '* * * * *' }];

describe('a v1 agent and a v2 agent behind one relay', { timeout: 600_000 }, () => {
  let topo: Topology;
  const api = <T>(path: string) =>
    fetch(`${topo.hubUrl}${path}`, { headers: topo.authHeaders }).then((r) => r.json() as Promise<T>);

  beforeAll(async () => {
    topo = await Topology.start({
      dir: mkdtempSync(join(tmpdir(), 'driftline-mixed-')),
      relayLink: { profile: 'lan', timeScale: 1 },
      sites: [
        { site: 'old-ship', agent: 'a1', profile: 'flaky', timeScale: 1, components: COMPONENTS },
        {
          site: 'new-ship',
          agent: 'a1',
          profile: 'flaky',
          timeScale: 1,
          components: COMPONENTS,
          agentSync: { wire: 2 },
        },
      ],
      agentSyncIntervalS: 3,
      fastPlans: true,
    });
  }, 180_000);

  afterAll(async () => {
    await topo?.stop();
  }, 120_000);

  it('brings every result of both to the hub and every ack back, each agent on its own wire', async () => {
    const cells = SITES.flatMap((site) => ['prod', 'staging'].map((env) => `${site}/${env}/network`));
    const runs = async (cell: string) => (await api<RunsResponse>(`/api/cells/${cell}/runs`)).runs ?? [];
    // two rounds at least: the first results and a re-plan of each cell
    await until(
      "both sites' cells to have two runs each at the hub",
      async () => (await Promise.all(cells.map(runs))).every((r) => r.length >= 2),
      240_000,
      1000,
    );
    // nothing lost: every run each agent recorded is acknowledged by the hub (D4), none waits
    for (const site of SITES)
      await until(
        `${site}'s agent to hold no unacknowledged run`,
        async () => (await agentStatus(topo, site)).unackedRuns === 0,
        120_000,
        1000,
      );
    const token = readFileSync(
      join(dirname(topo.layout.agentConfig('old-ship')), 'relay.token'),
      'utf8',
    ).trim();
    const metrics = await fetch(`${topo.relayUrl}/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    }).then((r) => r.text());
    const sum = (name: string, ...labels: string[]) =>
      metrics
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
        .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
    // the v2 agent registered its key and then pushed and pulled in v2 messages, the v1 agent in none
    expect(
      sum('driftline_hop_requests_total', 'route="/v1/peer/wire2"', 'status="200"'),
    ).toBeGreaterThanOrEqual(1);
    const v2 = (kind: string, peer: string) =>
      sum('driftline_hop_v2_messages_total', `kind="${kind}"`, `peer="${peer}"`);
    expect(v2('push', 'new-ship')).toBeGreaterThanOrEqual(2);
    expect(v2('pull', 'new-ship')).toBeGreaterThanOrEqual(2);
    expect(v2('push', 'old-ship') + v2('pull', 'old-ship')).toBe(0);
    // `edge-agent status` says which wire each upstream speaks with it
    const wireOf = async (site: string) =>
      ((await agentStatus(topo, site)) as { wire?: Record<string, { wire: number }> }).wire;
    expect(Object.values((await wireOf('new-ship')) ?? {}).map((l) => l.wire)).toEqual([2]);
    expect(await wireOf('old-ship')).toBeUndefined();
    // each agent keeps its message numbers only when it speaks v2
    const seqFile = (site: string) =>
      existsSync(join(dirname(topo.layout.agentConfig(site)), 'data', 'wire2-state.json'));
    expect([seqFile('old-ship'), seqFile('new-ship')]).toEqual([false, true]);
  });
});

async function agentStatus(topo: Topology, site: string): Promise<{ unackedRuns: number }> {
  const config = topo.layout.agentConfig(site);
  return JSON.parse(
    await runProgram('agent', ['status', '--config', config, '--json'], { cwd: dirname(config) }),
  );
}
