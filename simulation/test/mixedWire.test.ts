import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type RunsResponse, wire2 } from '@driftline/protocol';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProgram } from '../src/topology/programs.js';
import { Topology } from '../src/topology/Topology.js';
import { until } from './support.js';

/**
 * Issue 46's mixed fleet (docs/decisions/495-hop-v2-on-the-agent-link.md), as real processes: one relay,
 * a v1 agent and a v2 agent (`sync.wire: 2`) behind it, each over a flaky link (resets and stalls: what
 * loss looks like under TCP). Two rounds: every cell's plan at start, then a plan request for every
 * cell, which goes down each agent's own wire (a v2 pull answer or a v1 downlink page) and comes back up
 * as a second run. Both sites' results all reach the hub and every one is acknowledged back (nothing
 * pending at either agent); the v2 agent spoke `/v2` to the relay and never posted a v1 batch, the v1
 * agent never spoke `/v2`.
 */
const SITES = ['old-ship', 'new-ship'];
const ENVIRONMENTS = ['prod', 'staging'];
// Plans at start and on request only: a schedule that does not fire during the test (the second round is
// the plan requests, not a wait for a cron minute).
const COMPONENTS = [{ name: 'network', environments: ENVIRONMENTS, schedule: '0 0 1 1 *' }];
/** Both agents take plain files from headquarters into ./files. */
const ACCEPT = { accept: { file: { dir: './files' } } };

describe('a v1 agent and a v2 agent behind one relay', { timeout: 600_000 }, () => {
  let topo: Topology;
  const api = <T>(path: string) =>
    fetch(`${topo.hubUrl}${path}`, { headers: topo.authHeaders }).then((r) => r.json() as Promise<T>);
  const requestPlan = (c: Cell) =>
    until(`the hub to accept a plan request for ${c.site}/${c.environment}`, async () => {
      const r = await fetch(`${topo.hubUrl}/api/plan-requests`, {
        method: 'POST',
        headers: { ...topo.authHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ ...c, component: 'network' }),
      });
      return r.ok && ((await r.json()) as { requestId: string }).requestId;
    });

  beforeAll(async () => {
    topo = await Topology.start({
      dir: mkdtempSync(join(tmpdir(), 'driftline-mixed-')),
      relayLink: { profile: 'lan', timeScale: 1 },
      sites: [
        {
          site: 'old-ship',
          agent: 'a1',
          profile: 'flaky',
          timeScale: 1,
          components: COMPONENTS,
          // an agent of a build before v2, or one set to v1 (the default is 2)
          agentSync: { wire: 1 },
          publications: ACCEPT,
        },
        {
          site: 'new-ship',
          agent: 'a1',
          profile: 'flaky',
          timeScale: 1,
          components: COMPONENTS,
          agentSync: { wire: 2 },
          publications: ACCEPT,
        },
      ],
      agentSyncIntervalS: 3,
      fastPlans: true,
    });
    // a bound for a hang: a clean clone's whole run once took past 180 s to start it
  }, 360_000);

  afterAll(async () => {
    await topo?.stop();
  }, 120_000);

  it('brings every result of both to the hub and every ack back, each agent on its own wire', async () => {
    const cells = SITES.flatMap((site) => ENVIRONMENTS.map((environment) => ({ site, environment })));
    const runs = async (c: Cell) =>
      (await api<RunsResponse>(`/api/cells/${c.site}/${c.environment}/network/runs`)).runs ?? [];
    // round one: every cell's plan at start
    await until(
      "both sites' cells to have their first run at the hub",
      async () => (await Promise.all(cells.map(runs))).every((r) => r.length >= 1),
      240_000,
      1000,
    );
    // round two: a plan request per cell, down each agent's wire to it and its run back up
    const requests = await Promise.all(cells.map((c) => requestPlan(c)));
    const done = await until(
      'every plan request to be done',
      async () => {
        const states = await Promise.all(requests.map((id) => api<PlanRequest>(`/api/plan-requests/${id}`)));
        return states.every((r) => r.state === 'done') && states;
      },
      240_000,
      1000,
    );
    expect(done.map((r) => r.runId)).toEqual(cells.map(() => expect.stringMatching(/^[0-9A-Z]{26}$/)));
    expect((await Promise.all(cells.map(runs))).map((r) => r.length >= 2)).toEqual(cells.map(() => true));
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

  it('delivers one small file to both: the v2 site by the compact manifest, the v1 site by v1’s', async () => {
    const file = Buffer.from(`${'# headquarters note\n'.repeat(30)}`);
    // the v2 agent tells the hub it reads compact manifests once its relay said it carries them
    await until(
      'the v2 agent to say it reads compact manifests',
      async () => (await agentStatus(topo, 'new-ship')).unackedRuns === 0 && carries(topo, 'new-ship'),
      60_000,
      500,
    );
    const res = await fetch(
      `${topo.hubUrl}/api/publications?site=old-ship,new-ship&name=note.txt&kind=file`,
      {
        method: 'POST',
        headers: topo.authHeaders,
        body: file,
      },
    );
    expect(res.status).toBe(201);
    const placed = (site: string) => join(dirname(topo.layout.agentConfig(site)), 'files', 'note.txt');
    for (const site of SITES)
      await until(`${site} to place the file`, async () => existsSync(placed(site)), 120_000, 500);
    expect(SITES.map((site) => readFileSync(placed(site)).equals(file))).toEqual([true, true]);
    // what the hub queued for each: a signed v2 message for new-ship, v1's signed bundle for old-ship
    const db = new Database(join(dirname(topo.layout.hubConfig), 'data', 'hub.db'), { readonly: true });
    const forms = SITES.map((site) => {
      const row = db
        .prepare("SELECT bytes FROM downlink WHERE site = ? AND kind = 'blob' ORDER BY seq DESC LIMIT 1")
        .get(site) as { bytes: Buffer };
      return wire2.isWire2Message(row.bytes) ? 'v2' : row.bytes.subarray(0, 3).toString('latin1');
    });
    db.close();
    expect(forms).toEqual(['DLB', 'v2']);
  });
});

interface Cell {
  site: string;
  environment: string;
}

interface PlanRequest {
  state: string;
  runId: string | null;
}

/** Whether the agent's v2 state says every upstream carries compact manifests down (decision 505). */
function carries(topo: Topology, site: string): boolean {
  const file = join(dirname(topo.layout.agentConfig(site)), 'data', 'wire2-state.json');
  const state = JSON.parse(readFileSync(file, 'utf8')) as { links?: Record<string, { carries?: string[] }> };
  return Object.values(state.links ?? {}).every((l) => l.carries?.includes(wire2.CARRIES_PUBLICATIONS));
}

async function agentStatus(topo: Topology, site: string): Promise<{ unackedRuns: number }> {
  const config = topo.layout.agentConfig(site);
  return JSON.parse(
    await runProgram('agent', ['status', '--config', config, '--json'], { cwd: dirname(config) }),
  );
}
