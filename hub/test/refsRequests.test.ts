import {
  decodeBatch,
  decodeBundle,
  decodePayload,
  MatrixResponseSchema,
  PlanRequestSchema,
  RunsResponseSchema,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startHub, type TestHub } from './hubFixture.js';
import { refSites } from './refSetup.js';
import { planRef, push, reportRefs, sha } from './refSim.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});
const start = async (extra: object = {}) => {
  const h = await startHub(extra);
  hubs.push(h);
  return h;
};
const DAY = 86_400_000;

describe('plan requests for refs', { timeout: 60_000 }, () => {
  it('refuses a bad ref name, a bad commit and a ref the component may not plan, naming the problem', async () => {
    const h = await start();
    const s = await refSites(h);
    const ask = (body: object) =>
      s.post('/api/plan-requests', { site: 'ship-8', environment: 'prod', component: 'app', ...body });
    const cases: [object, string][] = [
      [{ ref: 'a..b' }, 'may not contain ".."'],
      [{ ref: '$(x)' }, 'letters, digits'],
      [{ ref: 'pr/1;reboot' }, 'letters, digits'],
      [{ ref: 'feature/x' }, "may plan only refs [main, pr/*], not 'feature/x'"],
      [{ ref: 'pr/1', commit: 'HEAD' }, 'not a full commit id'],
      [{ ref: 'pr/1', component: 'db' }, 'may plan only refs [main]'],
      [{ site: 'ship-7', component: 'net', ref: 'pr/1' }, 'plans no refs'],
    ];
    for (const [body, message] of cases) {
      const r = await ask(body);
      expect([r.status, r.body.error?.code], JSON.stringify(body)).toEqual([422, 'unprocessable']);
      expect(r.body.error?.message, JSON.stringify(body)).toContain(message);
    }
    expect((await s.get('/api/plan-requests')).body).toEqual({ requests: [] });
  });

  it('signs the ref and commit into the request, which only a plan of that cell and ref answers', async () => {
    const h = await start();
    const s = await refSites(h);
    const made = await s.post('/api/plan-requests', {
      site: 'ship-8',
      environment: 'prod',
      component: 'app',
      ref: 'pr/42',
      commit: sha('2'),
    });
    expect(made.status).toBe(201);
    const req = PlanRequestSchema.parse(made.body);
    expect(req).toMatchObject({ ref: 'pr/42', commit: sha('2'), state: 'pending' });
    const plain = PlanRequestSchema.parse(
      (await s.post('/api/plan-requests', { site: 'ship-8', environment: 'prod', component: 'app' })).body,
    );
    expect(plain.ref).toBeUndefined();

    const dl = await fetch(`${h.hopUrl}/v1/bundles?for=ship-8`, { headers: h.relay });
    const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
    if (!batch.ok) throw batch.error;
    const payloads = batch.value
      .map((b) => decodeBundle(b))
      .flatMap((b) =>
        b.ok && b.value.header.kind === 'control' ? [decodePayload('control', b.value.payload)] : [],
      )
      .flatMap((p) => (p.ok && p.value.type === 'plan-request' ? [p.value] : []));
    expect(payloads.map((p) => [p.requestId, p.ref, p.commit])).toEqual([
      [req.requestId, 'pr/42', sha('2')],
      [plain.requestId, undefined, undefined],
    ]);

    const state = async (id: string) =>
      PlanRequestSchema.parse((await s.get(`/api/plan-requests/${id}`)).body);
    // Another ref's plan, and another commit of the same ref, do not answer it; the main plan answers the plain one.
    h.clock.advance(2_000);
    await s.plan('ship-8', { component: 'app', ref: 'pr/7', commit: sha('2') });
    await s.plan('ship-8', { component: 'app', ref: 'pr/42', commit: sha('9') });
    expect((await state(req.requestId)).state).toBe('delivered');
    expect((await state(plain.requestId)).state).toBe('delivered');
    const mainRun = await s.plan('ship-8', {
      component: 'app',
      ref: 'main',
      commit: sha('1'),
      defaultRef: true,
    });
    expect(await state(plain.requestId)).toMatchObject({ state: 'done', runId: mainRun });
    expect((await state(req.requestId)).state).toBe('delivered');
    const runId = await s.plan('ship-8', { component: 'app', ref: 'pr/42', commit: sha('2') });
    expect(await state(req.requestId)).toMatchObject({ state: 'done', runId });
  });
});

describe('ref retention', { timeout: 60_000 }, () => {
  it('removes plans of refs not updated for refRetentionDays, with their runs, counted in the log and /metrics', async () => {
    const h = await start({ retention: { refRetentionDays: 5 } });
    const s = await refSites(h);
    await s.plan('ship-8', { component: 'app', ref: 'pr/1', commit: sha('2') });
    await s.plan('ship-8', { component: 'app', ref: 'pr/1', commit: sha('3') });
    h.clock.advance(3 * DAY);
    await s.plan('ship-9', { component: 'app', ref: 'pr/2', commit: sha('4') });
    h.clock.advance(3 * DAY);
    const r = await h.hub.sweeper.sweep({ prune: true });
    expect(r.pruned).toMatchObject({ refCells: 1, refRuns: 2 });
    expect(h.logs.join('')).toContain(
      'removed the plans of 1 ref cell(s) not updated for 5 days, with 2 run(s)',
    );
    const matrix = async (ref: string) =>
      MatrixResponseSchema.parse((await s.get(`/api/matrix?ref=${ref}`)).body).cells.map(
        (c) => `${c.site} ${c.status}`,
      );
    expect(await matrix('pr/1')).toEqual(['ship-8 no-data', 'ship-9 no-data']);
    expect(await matrix('pr/2')).toEqual(['ship-8 no-data', 'ship-9 changes']);
    expect(
      RunsResponseSchema.parse((await s.get('/api/cells/ship-8/prod/app/runs?ref=pr/1')).body).runs,
    ).toEqual([]);
    // Default cells and their runs stay, however old.
    expect(RunsResponseSchema.parse((await s.get('/api/cells/ship-8/prod/app/runs')).body).runs).toHaveLength(
      1,
    );
    const metrics = await (
      await fetch(`${h.url}/metrics`, { headers: { authorization: s.viewer.authorization } })
    ).text();
    expect(metrics).toContain('hub_ref_plans_expired_total{kind="cells"} 1');
    expect(metrics).toContain('hub_ref_plans_expired_total{kind="runs"} 2');

    // The agent's document still holds the expired cell: its next report (new facts) does not bring it back.
    h.clock.advance(1_000);
    reportRefs(s.agents['ship-8'], { platform: 'linux_amd64' });
    planRef(s.agents['ship-8'], {
      environment: 'prod',
      component: 'db',
      ref: 'main',
      commit: sha('1'),
      defaultRef: true,
    });
    await push(h.hopUrl, h.relay, s.agents['ship-8']);
    expect(await matrix('pr/1')).toEqual(['ship-8 no-data', 'ship-9 no-data']);
  });
});
