import { RunsResponseSchema } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim } from './agentSim.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

const lockOf = (id: string) => ({
  errorExcerpt: `Error: Error acquiring the state lock\nLock Info:\n  ID:        ${id}`,
  lock: {
    id,
    who: 'ops@bastion',
    created: '2026-12-02 16:46:18.137954996 +0000 UTC',
    path: 'terraform.tfstate',
  },
});
const A = '5ba24658-9d93-e5d5-231e-bf92254a663e';
const B = '0f2c9d11-4e1a-4b7e-9c3d-2a6b8e0f1c55';

describe('a stuck lock at the hub (decision 555)', () => {
  it('notifies new-failure once per held lock, though an older agent reads it locked between stuck runs', async () => {
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
    const run = async (status: 'locked' | 'failed' | 'clean', id?: string, component = 'dns') => {
      if (status === 'clean') lab.plan('prod', component, 'clean');
      else
        lab.plan('prod', component, status, {
          reason: status === 'failed' ? 'stuck-lock' : 'state-locked',
          summary: lockOf(id ?? A),
        });
      await h.hub.ingest.accept('relay-1', [await lab.delta()]);
    };
    const failures = async () =>
      (await h.hub.store.dueWebhooks(h.clock.now(), 100))
        .filter((w) => w.event === 'new-failure')
        .map((w) => `${JSON.parse(w.body).component} ${JSON.parse(w.body).reason}`)
        .sort();

    // An agent of an earlier release: locked, locked, stuck, locked, locked, stuck, all one lock.
    for (const s of ['locked', 'locked', 'failed', 'locked', 'locked', 'failed'] as const) await run(s, A);
    expect(await failures()).toEqual(['dns stuck-lock']);
    // This release: stuck from the third run on, one notice.
    for (const s of ['locked', 'locked', 'failed', 'failed', 'failed'] as const) await run(s, A, 'vpn');
    expect(await failures()).toEqual(['dns stuck-lock', 'vpn stuck-lock']);
    // The lock is released, then another one is held: another episode.
    await run('clean');
    for (const s of ['locked', 'locked', 'failed', 'failed'] as const) await run(s, B);
    expect(await failures()).toEqual(['dns stuck-lock', 'dns stuck-lock', 'vpn stuck-lock']);

    const r = await fetch(`${h.url}/api/cells/lab/prod/dns/runs`, { headers: { authorization: viewer } });
    const runs = RunsResponseSchema.parse(await r.json()).runs;
    expect(runs[0]).toMatchObject({
      status: 'failed',
      reason: 'stuck-lock',
      lock: { id: B, who: 'ops@bastion' },
    });
  });
});
