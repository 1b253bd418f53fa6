import {
  MatrixResponseSchema,
  NeedsResponseSchema,
  RefStatusResponseSchema,
  RefsResponseSchema,
  RunsResponseSchema,
  SourcesResponseSchema,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startHub, type TestHub } from './hubFixture.js';
import { AWS, refSites } from './refSetup.js';
import { sha } from './refSim.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});
const start = async (extra: object = {}) => {
  const h = await startHub(extra);
  hubs.push(h);
  return h;
};

const brief = (cells: { site: string; component: string; status: string; ref?: string | null }[]) =>
  cells.map((c) => `${c.site} ${c.component} ${c.status}${c.ref ? ` @${c.ref}` : ''}`);

describe('plans of refs at the hub', { timeout: 60_000 }, () => {
  it("shows a ref's plans at /api/matrix?ref= with no-data where a site may plan it, and keeps the main matrix to default refs", async () => {
    const h = await start();
    const s = await refSites(h);
    await s.plan('ship-8', { component: 'app', ref: 'pr/42', commit: sha('2'), status: 'changes' });

    const main = MatrixResponseSchema.parse((await s.get('/api/matrix')).body);
    expect(brief(main.cells)).toEqual([
      'ship-7 net clean',
      'ship-8 app clean @main',
      'ship-9 app clean @main',
    ]);
    const pr = MatrixResponseSchema.parse((await s.get('/api/matrix?ref=pr%2F42')).body);
    expect(brief(pr.cells)).toEqual(['ship-8 app changes @pr/42', 'ship-9 app no-data @pr/42']);
    expect(pr.cells[0]).toMatchObject({ commit: sha('2'), counts: { add: 2, change: 1 } });
    const onMain = MatrixResponseSchema.parse((await s.get('/api/matrix?ref=main')).body);
    expect(brief(onMain.cells)).toEqual([
      'ship-8 app clean @main',
      'ship-8 db no-data @main',
      'ship-9 app clean @main',
    ]);
    expect(
      brief(MatrixResponseSchema.parse((await s.get('/api/matrix?ref=pr/42&site=ship-9')).body).cells),
    ).toEqual(['ship-9 app no-data @pr/42']);

    const runs = RunsResponseSchema.parse((await s.get('/api/cells/ship-8/prod/app/runs?ref=pr%2F42')).body);
    expect(runs.runs.map((r) => [r.ref, r.commit, r.status])).toEqual([['pr/42', sha('2'), 'changes']]);
    const mainRuns = RunsResponseSchema.parse((await s.get('/api/cells/ship-8/prod/app/runs')).body);
    expect(mainRuns.runs.map((r) => [r.ref, r.commit, r.status])).toEqual([['main', sha('1'), 'clean']]);

    const refs = RefsResponseSchema.parse((await s.get('/api/refs')).body);
    expect(refs.refs.map((r) => [r.ref, r.cells])).toEqual([
      ['pr/42', 1],
      ['main', 2],
    ]);

    for (const bad of ['a..b', '$(x)', 'pr/42;rm', '-x']) {
      const r = await s.get(`/api/matrix?ref=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error?.code).toBe('bad-query');
    }
    const both = await s.get('/api/matrix?ref=pr%2F42&at=2025-06-01T12:00:00.000Z');
    expect(both.body.error?.message).toContain("'ref' and 'at' cannot be combined");
    expect((await s.get('/api/cells/ship-8/prod/app/runs?ref=a..b')).status).toBe(400);
  });

  it('gates a commit: pending until every touched cell has a plan of it, then complete; blocked and failed win', async () => {
    const h = await start();
    const s = await refSites(h);
    const gate = async (ref: string, commit: string) => {
      const r = await s.get(`/api/refs/${encodeURIComponent(ref)}/status?commit=${commit}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return RefStatusResponseSchema.parse(r.body);
    };
    const states = (g: Awaited<ReturnType<typeof gate>>) =>
      g.cells.map((c) => `${c.site} ${c.component} ${c.state}`);

    let g = await gate('pr/42', sha('2'));
    expect(g.state).toBe('pending');
    expect(states(g)).toEqual(['ship-8 app pending', 'ship-9 app pending']);

    await s.plan('ship-8', { component: 'app', ref: 'pr/42', commit: sha('2'), status: 'changes' });
    g = await gate('pr/42', sha('2'));
    expect([g.state, g.counts]).toEqual([
      'pending',
      { complete: 1, pending: 1, blocked: 0, failed: 0, total: 2 },
    ]);

    await s.plan('ship-9', { component: 'app', ref: 'pr/42', commit: sha('2'), status: 'drift' });
    g = await gate('pr/42', sha('2'));
    expect(g.state).toBe('complete');
    expect(g.cells.map((c) => c.planStatus)).toEqual(['changes', 'drift']);

    // A new commit: the site lacks a provider for it.
    await s.plan('ship-8', {
      component: 'app',
      ref: 'pr/42',
      commit: sha('3'),
      status: 'blocked',
      needs: [AWS],
    });
    g = await gate('pr/42', sha('3'));
    expect(g.state).toBe('blocked');
    expect(g.cells[0]).toMatchObject({ state: 'blocked', planStatus: 'blocked', needs: [AWS] });
    expect(g.cells[1]).toMatchObject({ state: 'pending', commit: sha('2'), planStatus: null });
    // The earlier commit stays complete: its plan is found among the cell's runs.
    expect((await gate('pr/42', sha('2'))).state).toBe('complete');

    await s.plan('ship-9', {
      component: 'app',
      ref: 'pr/42',
      commit: sha('3'),
      status: 'failed',
      reason: 'exit-1',
    });
    g = await gate('pr/42', sha('3'));
    expect(g.state).toBe('failed');
    expect(g.cells[1]).toMatchObject({ state: 'failed', reason: 'exit-1' });

    // main is a ref too: the default cells planned it.
    expect((await gate('main', sha('1'))).state).toBe('pending'); // ship-8 prod/db has not planned
    const unknown = await s.get(`/api/refs/release%2F9/status?commit=${sha('3')}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error?.message).toContain("no site plans ref 'release/9'");
    expect((await s.get(`/api/refs/a..b/status?commit=${sha('3')}`)).status).toBe(400);
    expect((await s.get('/api/refs/pr%2F42/status?commit=HEAD')).status).toBe(400);
    expect((await s.get('/api/refs/pr%2F42/status')).status).toBe(400);
  });

  it('holds a cell blocked on a need that a publication on its way answers as pending, and blocked again once the site placed it and still lacks it', async () => {
    const h = await start();
    const s = await refSites(h);
    const gate = async () =>
      RefStatusResponseSchema.parse((await s.get(`/api/refs/pr%2F42/status?commit=${sha('3')}`)).body);
    await s.plan('ship-8', {
      component: 'app',
      ref: 'pr/42',
      commit: sha('3'),
      status: 'blocked',
      needs: [AWS],
    });
    await s.plan('ship-9', { component: 'app', ref: 'pr/42', commit: sha('3'), status: 'clean' });
    expect((await gate()).state).toBe('blocked');

    // The mirror is published after the blocked plan reached the hub: it is on its way to ship-8.
    h.clock.advance(1000);
    const publication = {
      publicationId: 'pub-aws',
      name: 'registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.zip',
      fileKind: 'provider-mirror' as const,
      sha256: 'a'.repeat(64),
      size: 10,
      sites: ['ship-8'],
      publishedAt: h.clock.now(),
      expiresAt: null,
    };
    await h.hub.publications.publish(publication);
    let g = await gate();
    expect(g.state).toBe('pending');
    expect(g.cells[0]).toMatchObject({
      state: 'pending',
      planStatus: 'blocked',
      needs: [AWS],
      onTheWay: ['pub-aws'],
    });
    expect(g.counts).toMatchObject({ pending: 1, blocked: 0, complete: 1 });

    // A publication of another build, or to another site, answers nothing.
    await h.hub.publications.publish({ ...publication, publicationId: 'pub-other', sites: ['ship-9'] });
    expect((await gate()).cells[0]?.onTheWay).toEqual(['pub-aws']);

    // The site placed it, and its next plan (received after that) is still blocked: a real block.
    h.clock.advance(1000);
    await h.hub.publications.report([
      {
        publicationId: 'pub-aws',
        site: 'ship-8',
        agent: 'b1',
        state: 'placed',
        bytes: 10,
        reason: null,
        updatedAt: h.clock.now(),
      },
    ]);
    h.clock.advance(1000);
    await s.plan('ship-8', {
      component: 'app',
      ref: 'pr/42',
      commit: sha('3'),
      status: 'blocked',
      needs: [AWS],
    });
    g = await gate();
    expect(g.state).toBe('blocked');
    expect(g.cells[0]?.onTheWay ?? []).toEqual([]);

    // Refused at the site: not on its way.
    await h.hub.publications.report([
      {
        publicationId: 'pub-aws',
        site: 'ship-8',
        agent: 'b1',
        state: 'refused',
        bytes: 0,
        reason: 'kind not accepted',
        updatedAt: h.clock.now(),
      },
    ]);
    expect((await gate()).state).toBe('blocked');
  });

  it('lists what sites need from blocked cells, default and ref cells alike, by site and need', async () => {
    const h = await start();
    const s = await refSites(h);
    await s.plan('ship-8', {
      component: 'app',
      ref: 'pr/42',
      commit: sha('3'),
      status: 'blocked',
      needs: [AWS],
    });
    const since = new Date(h.clock.now()).toISOString();
    await s.plan('ship-8', {
      component: 'db',
      ref: 'main',
      commit: sha('1'),
      status: 'blocked',
      needs: [AWS],
      defaultRef: true,
    });
    const commitNeed = `commit ${sha('4')} of infra`;
    await s.plan('ship-9', {
      component: 'app',
      ref: 'pr/7',
      commit: sha('4'),
      status: 'blocked',
      needs: [commitNeed],
    });
    const needs = NeedsResponseSchema.parse((await s.get('/api/needs')).body);
    expect(needs.needs).toEqual([
      {
        site: 'ship-8',
        need: AWS,
        cells: [
          { environment: 'prod', component: 'db', ref: 'main' },
          { environment: 'prod', component: 'app', ref: 'pr/42' },
        ],
        since,
      },
      {
        site: 'ship-9',
        need: commitNeed,
        cells: [{ environment: 'prod', component: 'app', ref: 'pr/7' }],
        since: expect.any(String),
      },
    ]);
    expect(NeedsResponseSchema.parse((await s.get('/api/needs?site=ship-9')).body).needs).toHaveLength(1);
    // The matrix carries the needs too.
    const m = MatrixResponseSchema.parse((await s.get('/api/matrix?status=blocked')).body);
    expect(m.cells.map((c) => [c.component, c.needs])).toEqual([['db', [AWS]]]);
  });

  it('tells publishers what each site holds, merged over its agents', async () => {
    const h = await start();
    const s = await refSites(h);
    const publisher = await addTestUser(h.hub.store, 'ci-publish', ['publisher']);
    const r = await s.get('/api/sources?site=ship-8,ship-9', publisher.authorization);
    expect(r.status).toBe(200);
    const sources = SourcesResponseSchema.parse(r.body);
    expect(sources.sites).toEqual([
      {
        site: 'ship-8',
        repos: { infra: { main: sha('1'), 'pr/42': sha('2') } },
        providers: [AWS.replace('5.31.0', '5.30.0')],
        platforms: ['linux_amd64'],
        reportedAt: expect.any(String),
      },
      {
        site: 'ship-9',
        repos: { infra: { main: sha('1') } },
        providers: [],
        platforms: ['linux_arm64'],
        reportedAt: expect.any(String),
      },
    ]);
    const all = SourcesResponseSchema.parse((await s.get('/api/sources')).body);
    expect(all.sites.map((x) => x.site)).toEqual(['ship-7', 'ship-8', 'ship-9']);
    const missing = await s.get('/api/sources?site=ship-8,nowhere');
    expect([missing.status, missing.body.error?.message]).toEqual([404, expect.stringContaining('nowhere')]);
    expect(
      (await s.get(`/api/sources?site=${Array.from({ length: 101 }, (_, i) => `s${i}`).join(',')}`)).status,
    ).toBe(400);
    expect((await fetch(`${h.url}/api/sources`)).status).toBe(401);
  });
});
