import {
  BATCH_CONTENT_TYPE,
  encodeBatch,
  FleetResponseSchema,
  SitesResponseSchema,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim } from './agentSim.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

describe('GET /api/fleet', () => {
  it('counts by status, site and environment, lists the worst cells first and says why a site has no data', async () => {
    const h = await startHub();
    hubs.push(h);
    const viewer = await addTestUser(h.hub.store, 'wall-screen', ['viewer']);
    // The fixture's agent planned ship-7 prod/net clean. lab plans a failure and a drift; polar-1 is
    // enrolled but never heard from.
    const enrolled = async (site: string) => {
      const agent = await AgentSim.create(site, 'a1', h.clock);
      const e = await enrol(
        h.hub.store,
        { site, agent: 'a1', key: await agent.publicKeyText() },
        h.clock.now(),
      );
      expect(e.ok).toBe(true);
      return agent;
    };
    const lab = await enrolled('lab');
    await enrolled('polar-1');
    lab.plan('prod', 'dns', 'failed');
    lab.plan('staging', 'dns', 'drift', { queueDepth: 3 });
    const res0 = await fetch(`${h.hopUrl}/v1/bundles`, {
      method: 'POST',
      headers: { ...h.relay, 'content-type': BATCH_CONTENT_TYPE },
      body: encodeBatch([await lab.delta()]) as Uint8Array<ArrayBuffer>,
    });
    expect(res0.status).toBe(200);

    const res = await fetch(`${h.url}/api/fleet`, { headers: { authorization: viewer.authorization } });
    expect(res.status).toBe(200);
    const fleet = FleetResponseSchema.parse(await res.json());
    expect(fleet.totals).toMatchObject({ cells: 3, sites: 3, unreachableSites: 0, stale: 0 });
    expect(fleet.totals.statusCounts).toEqual({ clean: 1, failed: 1, drift: 1 });
    expect(fleet.environments.map((x) => [x.environment, x.cells, x.sites])).toEqual([
      ['prod', 2, ['lab', 'ship-7']],
      ['staging', 1, ['lab']],
    ]);
    expect(fleet.components).toEqual(['dns', 'net']);
    const bySite = new Map<string, (typeof fleet.sites)[number]>(fleet.sites.map((s) => [s.site, s]));
    expect(bySite.get('lab')).toMatchObject({
      link: 'ok',
      agents: 1,
      agentsHeardFrom: 1,
      queueDepth: 3,
      environments: ['prod', 'staging'],
      statusCounts: { failed: 1, drift: 1 },
    });
    expect(bySite.get('polar-1')).toMatchObject({ link: 'never-heard', agents: 1, agentsHeardFrom: 0 });
    expect(fleet.attention.map((a) => `${a.kind} ${a.site} ${a.environment}/${a.component}`)).toEqual([
      'failed lab prod/dns',
      'drift lab staging/dns',
    ]);
    expect(fleet.attentionCounts).toMatchObject({ failed: 1, drift: 1, stale: 0 });
  });

  it("counts each site's drift as attention counts it: a plan with changes that also found drift", async () => {
    const h = await startHub();
    hubs.push(h);
    const viewer = await addTestUser(h.hub.store, 'wall-screen', ['viewer']);
    const lab = await AgentSim.create('lab', 'a1', h.clock);
    expect(
      (await enrol(h.hub.store, { site: 'lab', agent: 'a1', key: await lab.publicKeyText() }, h.clock.now()))
        .ok,
    ).toBe(true);
    lab.plan('prod', 'dns', 'drift');
    lab.plan('prod', 'web', 'changes', { counts: { drift: 2 } });
    await h.hub.ingest.accept('relay-1', [await lab.delta()]);
    const get = async (path: string) =>
      (await fetch(`${h.url}${path}`, { headers: { authorization: viewer.authorization } })).json();
    const fleet = FleetResponseSchema.parse(await get('/api/fleet'));
    expect(fleet.attentionCounts.drift).toBe(2);
    const lab1 = fleet.sites.find((s) => s.site === 'lab');
    // The status counts say what the plans were; the attention counts say what attention says.
    expect(lab1?.statusCounts).toEqual({ drift: 1, changes: 1 });
    expect(lab1?.attentionCounts).toMatchObject({ drift: 2 });
    const page = SitesResponseSchema.parse(await get('/api/sites?sort=site'));
    expect(page.sites.find((s) => s.site === 'lab')?.attentionCounts).toMatchObject({ drift: 2 });
  });

  it('needs a credential', async () => {
    const h = await startHub();
    hubs.push(h);
    expect((await fetch(`${h.url}/api/fleet`)).status).toBe(401);
  });
});
