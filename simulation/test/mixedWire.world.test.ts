import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunsResponse, wire2 } from '@driftline/protocol';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROFILES } from '../src/core/link/profiles.js';
import { startVirtualWorld } from './hostile/virtualWorld.js';
import type { World } from './hostile/world.js';
import { until } from './support.js';

/**
 * Issue 46's mixed fleet (docs/decisions/495-hop-v2-on-the-agent-link.md), in the deterministic world
 * (docs/decisions/540-deterministic-world.md): one relay, a v1 agent and a v2 agent (`sync.wire: 2`)
 * behind it, each over the flaky profile's link (resets and stalls, drawn from the seed). Two rounds:
 * every cell's plan at start, then a plan request for every cell, which goes down each agent's own wire
 * (a v2 pull answer or a v1 downlink page) and comes back up as a second run. Both sites' results all
 * reach the hub and every one is acknowledged back (nothing pending at either agent); the v2 agent spoke
 * `/v2` to the relay and never posted a v1 batch, the v1 agent never spoke `/v2`. Then a small file
 * published to both: each placed it, from the hub's v1 bundle or its v2 message.
 */
const SITES = ['old-ship', 'new-ship'];
const ENVIRONMENTS = ['prod', 'staging'];

describe('a v1 agent and a v2 agent behind one relay', () => {
  let world: World;
  const api = async <T>(path: string) => (await (await world.api(path)).json()) as T;
  const requestPlan = (c: Cell) =>
    until(`the hub to accept a plan request for ${c.site}/${c.environment}`, async () => {
      const r = await world.api('/api/plan-requests', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...c, component: 'network' }),
      });
      return r.ok && ((await r.json()) as { requestId: string }).requestId;
    });

  beforeAll(async () => {
    world = await startVirtualWorld({
      sites: SITES,
      environments: ENVIRONMENTS,
      // the flaky profile uncompressed (the process test's `timeScale: 1`), on each agent's link
      agentLink: PROFILES.flaky?.settings,
      // the relay's key enrolled, as a Topology enrols it (decision 415)
      relayKey: true,
      agentSync: { intervalS: 3, maxParallelRuns: 1 },
      // an agent of a build before v2, or one set to v1 (the default is 2)
      siteSync: { 'old-ship': { wire: 1 }, 'new-ship': { wire: 2 } },
      // both agents take plain files from headquarters into ./files
      agentPublications: { accept: { file: { dir: './files' } } },
    });
  });

  afterAll(() => world?.stop());

  it('brings every result of both to the hub and every ack back, each agent on its own wire', async () => {
    const w = world;
    const cells = SITES.flatMap((site) => ENVIRONMENTS.map((environment) => ({ site, environment })));
    const runs = async (c: Cell) =>
      (await api<RunsResponse>(`/api/cells/${c.site}/${c.environment}/network/runs`)).runs ?? [];
    // round one: every cell's plan at start, one run each
    await until(
      "both sites' cells to have their first run at the hub",
      async () => (await Promise.all(cells.map(runs))).every((r) => r.length >= 1),
      240_000,
      1000,
    );
    expect((await Promise.all(cells.map(runs))).map((r) => r.length)).toEqual(cells.map(() => 1));
    // round two: each cell plans changes next (the process test's fast plans: clean, then changes), so
    // the plan a request asks for is a new run; a request per cell, down each agent's wire and back up
    for (const c of cells)
      writeFileSync(
        join(w.dir, c.site, 'infra', 'network', c.environment, 'fake-terraform.json'),
        JSON.stringify({ steps: [{ state: 'changes' }] }),
      );
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
    // each request's run is its cell's second and newest
    const after = await Promise.all(cells.map(runs));
    expect(after.map((r) => r.length)).toEqual(cells.map(() => 2));
    expect(after.map((r) => r.some((x) => done.some((d) => d.runId === x.runId)))).toEqual(
      cells.map(() => true),
    );
    // nothing lost: every run each agent recorded is acknowledged by the hub (D4), none waits
    for (const site of SITES)
      await until(
        `${site}'s agent to hold no unacknowledged run`,
        async () => (await w.agentStatus(site)).unackedRuns === 0,
        120_000,
        1000,
      );
    // the v2 agent registered its key and then pushed and pulled in v2 messages, the v1 agent in none
    expect(
      await w.relayMetric('driftline_hop_requests_total', { route: '/v1/peer/wire2', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    const v2 = (kind: string, peer: string) =>
      w.relayMetric('driftline_hop_v2_messages_total', { kind, peer });
    expect(await v2('push', 'new-ship')).toBeGreaterThanOrEqual(2);
    expect(await v2('pull', 'new-ship')).toBeGreaterThanOrEqual(2);
    expect((await v2('push', 'old-ship')) + (await v2('pull', 'old-ship'))).toBe(0);
    // `edge-agent status` says which wire each upstream speaks with it
    const wireOf = async (site: string) =>
      ((await w.agentStatus(site)) as { wire?: Record<string, { wire: number }> }).wire;
    expect(Object.values((await wireOf('new-ship')) ?? {}).map((l) => l.wire)).toEqual([2]);
    expect(await wireOf('old-ship')).toBeUndefined();
    // each agent keeps its message numbers only when it speaks v2
    const seqFile = (site: string) => existsSync(join(w.dir, site, 'data', 'wire2-state.json'));
    expect([seqFile('old-ship'), seqFile('new-ship')]).toEqual([false, true]);
  });

  it('delivers one small file to both: the v2 site by the compact manifest, the v1 site by v1’s', async () => {
    const w = world;
    const file = Buffer.from(`${'# headquarters note\n'.repeat(30)}`);
    // the v2 agent tells the hub it reads compact manifests once its relay said it carries them
    await until(
      'the v2 agent to say it reads compact manifests',
      async () => (await w.agentStatus('new-ship')).unackedRuns === 0 && carries(w, 'new-ship'),
      60_000,
      500,
    );
    const res = await w.api('/api/publications?site=old-ship,new-ship&name=note.txt&kind=file', {
      method: 'POST',
      body: file,
    });
    expect(res.status).toBe(201);
    const placed = (site: string) => join(w.dir, site, 'files', 'note.txt');
    for (const site of SITES)
      await until(`${site} to place the file`, async () => existsSync(placed(site)), 120_000, 500);
    expect(SITES.map((site) => readFileSync(placed(site)).equals(file))).toEqual([true, true]);
    // what the hub queued for each: a signed v2 message for new-ship, v1's signed bundle for old-ship
    const db = new Database(join(w.dir, 'hub-data', 'hub.db'), { readonly: true });
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
function carries(w: World, site: string): boolean {
  const file = join(w.dir, site, 'data', 'wire2-state.json');
  const state = JSON.parse(readFileSync(file, 'utf8')) as { links?: Record<string, { carries?: string[] }> };
  return Object.values(state.links ?? {}).every((l) => l.carries?.includes(wire2.CARRIES_PUBLICATIONS));
}
