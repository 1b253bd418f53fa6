import { describe, expect, it } from 'vitest';
import { stepFixture } from '../../../test/ingestSteps.js';
import { KeyCache } from '../verify.js';
import { dedupe } from './dedupe.js';
import { verifyAll } from './verifyAll.js';

describe('ingest steps: verify and dedupe', () => {
  it('refuses a bundle that is not one, with a rejected receipt at its index, and keeps the good one', async () => {
    const f = await stepFixture();
    f.sim.plan('prod', 'net', 'clean');
    const good = await f.sim.delta();
    const b = f.batch(2);
    const ok = await verifyAll(b, [new Uint8Array([1, 2, 3]), good], new KeyCache(), f.deps.count);
    expect(ok.map((a) => a.index)).toEqual([1]);
    expect(b.receipts[0]).toMatchObject({ index: 0, status: 'rejected', by: 'hub' });
    expect(b.receipts[1]).toBeNull();
    expect(f.refused).toHaveLength(1);
  });

  it('groups new bundles by document and marks one met twice (or already stored) duplicate', async () => {
    const f = await stepFixture();
    f.sim.plan('prod', 'net', 'clean');
    const one = await f.sim.delta();
    f.sim.plan('prod', 'dns', 'drift');
    const two = await f.sim.delta();
    const b = f.batch(3);
    const ok = await verifyAll(b, [one, two, one], new KeyCache(), f.deps.count);
    await f.store.commit({ bundles: [{ id: ok[1]!.id, receivedAt: 1 }] });
    const groups = await dedupe(b, ok);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ docId: f.sim.docId, site: 'ship-7', agent: 'a1', epoch: 1 });
    expect(groups[0]!.items.map((i) => i.index)).toEqual([0]);
    expect(b.receipts.map((r) => r?.status ?? null)).toEqual([null, 'duplicate', 'duplicate']);
  });
});
