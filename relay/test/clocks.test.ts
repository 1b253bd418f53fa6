import { join } from 'node:path';
import { type ClockEstimate, TRUSTED_CLOCK } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryUpstream } from '../src/adapters/memory/MemoryUpstream.js';
import { SqliteCustody } from '../src/adapters/sqlite/SqliteCustody.js';
import { describeBundle } from '../src/core/describeBundle.js';
import { forwardStep, sourceClocks, type UpstreamSlot } from '../src/core/Forwarder.js';
import { makeBundle, tmp } from './helpers.js';

const stores: SqliteCustody[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});
const T0 = Date.parse('2025-01-01T00:00:00Z');

describe('source clocks through custody', () => {
  it('keeps each bundle’s source clock with it and sends it on with the batch', async () => {
    const s = new SqliteCustody(join(tmp(), 'r.sqlite'));
    stores.push(s);
    const items = [];
    const clocks: (ClockEstimate | null)[] = [
      { offsetMs: 510_000, uncertaintyMs: 2020 },
      { offsetMs: 509_000, uncertaintyMs: 900 },
      null,
    ];
    for (const [i, agent] of ['a1', 'a1', 'a2'].entries()) {
      const b = await makeBundle({ created: T0, source: { site: 'ship-7', agent } as never });
      const d = describeBundle(b.bytes);
      if (!d.ok) throw new Error(d.message);
      expect(d.value.source).toBe(`ship-7/${agent}`);
      items.push({ ...d.value, clock: clocks[i] });
    }
    s.accept('ship-lan', items, T0);
    const queued = s.nextBatch(T0, 1 << 20, 10);
    expect(queued.map((q) => q.clock)).toEqual(clocks);

    const up = new MemoryUpstream('hub');
    const slot: UpstreamSlot = { upstream: up, plan: { windows: [] }, failures: 0, retryAt: 0 };
    const opts = { batchBytes: 1 << 20, batchCount: 10, backoffBaseMs: 1, backoffMaxMs: 1, idleMs: 1 };
    const r = await forwardStep(
      s,
      [slot],
      opts,
      () => T0,
      Math.random,
      () => {},
    );
    expect(r.sent).toBe(3);
    // Of two bundles of one source, the more certain estimate; a source without one is not named.
    expect(up.batches[0]?.clocks).toEqual(
      new Map([['ship-7/a1', { offsetMs: 509_000, uncertaintyMs: 900 }]]),
    );
  });

  it('prefers a trusted clock and leaves out bundles whose source is unknown', () => {
    const m = sourceClocks([
      { source: 'ship-7/a1', clock: { offsetMs: 5, uncertaintyMs: 3 } },
      { source: 'ship-7/a1', clock: TRUSTED_CLOCK },
      { source: null, clock: { offsetMs: 5, uncertaintyMs: 3 } },
      { source: 'ship-7/a2' },
    ]);
    expect(m).toEqual(new Map([['ship-7/a1', TRUSTED_CLOCK]]));
  });
});
