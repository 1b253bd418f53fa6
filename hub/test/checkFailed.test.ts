import {
  DriftResponseSchema,
  FleetResponseSchema,
  MatrixResponseSchema,
  RunsResponseSchema,
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

const checks = (fail: number) => ({
  checks: {
    pass: 1,
    fail,
    unknown: 0,
    items: [
      ...(fail ? [{ address: 'check.health', kind: 'check', status: 'fail' }] : []),
      { address: 'terraform_data.x', kind: 'resource', status: 'pass' },
    ],
  },
});

describe('a failing check (decision 420)', () => {
  it('is its own signal in the matrix, attention and history, beside a clean plan', async () => {
    const h = await startHub({ webhooks: { urls: ['http://127.0.0.1:9/hook'], secret: 'x'.repeat(16) } });
    hubs.push(h);
    const viewer = (await addTestUser(h.hub.store, 'wall', ['viewer'])).authorization;
    const lab = await AgentSim.create('lab', 'a1', h.clock);
    const e = await enrol(
      h.hub.store,
      { site: 'lab', agent: 'a1', key: await lab.publicKeyText() },
      h.clock.now(),
    );
    expect(e.ok).toBe(true);
    const push = async () => {
      await h.hub.ingest.accept('relay-1', [await lab.delta()]);
      await h.hub.drift.settled();
    };
    const get = async (path: string) => {
      const r = await fetch(`${h.url}${path}`, { headers: { authorization: viewer } });
      expect(r.status, path).toBe(200);
      return r.json();
    };
    lab.plan('prod', 'dns', 'clean', { summary: checks(1) });
    await push();
    lab.plan('prod', 'dns', 'clean', { summary: checks(1) });
    await push();

    const m = MatrixResponseSchema.parse(await get('/api/matrix?site=lab'));
    expect(m.cells[0]).toMatchObject({ status: 'clean', checksFailed: 1 });
    const fleet = FleetResponseSchema.parse(await get('/api/fleet'));
    expect(fleet.attention.map((a) => `${a.kind} ${a.site}`)).toEqual(['check-failed lab']);
    expect(fleet.attentionCounts['check-failed']).toBe(1);
    const runs = RunsResponseSchema.parse(await get('/api/cells/lab/prod/dns/runs'));
    expect(runs.runs.map((r) => r.checksFailed)).toEqual([1, 1]);
    // Each run names its failing checks, so the cell page can say which (issue 58).
    expect(runs.runs.map((r) => r.failingChecks)).toEqual([['check.health'], ['check.health']]);
    const episodes = DriftResponseSchema.parse(await get('/api/drift?kind=check'));
    expect(episodes.episodes).toMatchObject([{ address: 'check.health', state: 'open', site: 'lab' }]);
    const due = await h.hub.store.dueWebhooks(h.clock.now(), 100);
    expect(due.filter((w) => w.event === 'check.failed').map((w) => JSON.parse(w.body).address)).toEqual([
      'check.health',
    ]);

    // The check passes again: the episode ends, the cell leaves attention.
    lab.plan('prod', 'dns', 'clean', { summary: checks(0) });
    await push();
    expect(MatrixResponseSchema.parse(await get('/api/matrix?site=lab')).cells[0]).toMatchObject({
      checksFailed: 0,
    });
    expect(FleetResponseSchema.parse(await get('/api/fleet')).attentionCounts['check-failed']).toBe(0);
    const passed = RunsResponseSchema.parse(await get('/api/cells/lab/prod/dns/runs')).runs[0];
    expect(passed).toMatchObject({ checksFailed: 0 });
    expect(passed).not.toHaveProperty('failingChecks');
    const after = DriftResponseSchema.parse(await get('/api/drift?kind=check'));
    expect(after.episodes[0]).toMatchObject({ state: 'resolved' });
  });
});
