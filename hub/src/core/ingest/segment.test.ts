import { describe, expect, it } from 'vitest';
import { stepFixture } from '../../../test/ingestSteps.js';
import { KeyCache } from '../verify.js';
import { dedupe } from './dedupe.js';
import { readSegment } from './segment.js';
import { startMerges } from './startMerges.js';
import { verifyAll } from './verifyAll.js';

async function merged(f: Awaited<ReturnType<typeof stepFixture>>) {
  const b = f.batch(1);
  const ok = await verifyAll(b, [await f.sim.delta()], new KeyCache(), f.deps.count);
  const [doc] = startMerges(f.replicas, await dedupe(b, ok));
  const { out, memo } = await doc!.job;
  return { b, out, memo, ctx: { site: 'ship-7', agent: 'a1', docId: doc!.docId, memo, offsetMs: 0 } };
}

describe('ingest steps: materialise, cells and history, webhooks, plan requests', () => {
  it('turns a segment into runs, a changed cell with a history row and a new-drift webhook', async () => {
    const f = await stepFixture();
    const runId = f.sim.plan('prod', 'net', 'drift', { cadenceS: 600 });
    const { b, out, ctx } = await merged(f);
    await readSegment(b, f.deps, ctx, out.segments[0]);
    expect(b.w.runs.map((r) => r.runId)).toEqual([runId]);
    expect([...b.changedCells.values()]).toMatchObject([{ environment: 'prod', component: 'net', runId }]);
    expect(b.w.history).toHaveLength(1);
    expect(b.w.webhooks.map((w) => w.event)).toEqual(['new-drift']);
  });

  it('answers an open plan request with a run that started after it', async () => {
    const f = await stepFixture();
    const asked = f.clock.now();
    await f.store.commit({
      planRequests: [
        {
          requestId: 'req-1',
          site: 'ship-7',
          agent: 'a1',
          environment: 'prod',
          component: 'net',
          state: 'delivered',
          requestedAt: asked,
          expiresAt: asked + 3_600_000,
          deliveredAt: asked,
          doneAt: null,
          runId: null,
        },
      ],
    });
    f.clock.advance(1_000);
    const runId = f.sim.plan('prod', 'net', 'clean');
    const { b, out, ctx } = await merged(f);
    await readSegment(b, f.deps, ctx, out.segments[0]);
    expect(b.doneRequests.get('req-1')).toMatchObject({ state: 'done', runId, doneAt: b.now });
  });

  it('does nothing for an empty segment', async () => {
    const f = await stepFixture();
    f.sim.plan('prod', 'net', 'clean');
    const { b, ctx } = await merged(f);
    await readSegment(b, f.deps, ctx, null);
    expect(b.w.runs).toEqual([]);
    expect(b.changedCells.size).toBe(0);
  });
});
