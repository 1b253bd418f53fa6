import type { BundleId, Receipt } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { RefusalNotices } from './refusalNotices.js';

const refused = (ids: string[], sources: (string | null)[], code = 'forbidden') => ({
  type: 'refused' as const,
  upstream: 'hub',
  receipts: ids.map(
    (id, index): Receipt => ({
      bundleId: id as BundleId,
      index,
      status: 'rejected',
      code: code as Receipt['code'],
      message: 'not yours',
      by: 'hub',
    }),
  ),
  sources,
});

describe('RefusalNotices', () => {
  it('folds refusals per agent and code, gives a site only its own agents’ notices, and forgets them after keepMs', () => {
    const n = new RefusalNotices('relay-1', 1000, 10);
    n.note(refused(['A', 'B', 'C'], ['ship-8/a1', 'ship-8/a1', 'ship-7/a1']), 100);
    n.note(refused(['D'], ['ship-8/a1']), 200);
    n.note(refused(['E'], [null]), 200);
    const [only, ...rest] = n.for('ship-8', 300);
    expect(rest).toEqual([]);
    expect(only).toMatchObject({
      site: 'ship-8',
      agent: 'a1',
      code: 'forbidden',
      bundleIds: ['A', 'B', 'D'],
      count: 3,
      firstAt: 100,
      lastAt: 200,
      relay: 'relay-1',
      by: 'hub',
      message: 'not yours',
    });
    expect(n.for('ship-7', 300).map((x) => x.bundleIds)).toEqual([['C']]);
    expect(n.for('ship-8', 1200)).toEqual([]);
  });

  it('keeps at most max notices, the least recently refused going first', () => {
    const n = new RefusalNotices('relay-1', 10_000, 2);
    n.note(refused(['A'], ['s1/a']), 1);
    n.note(refused(['B'], ['s2/a']), 2);
    n.note(refused(['C'], ['s3/a']), 3);
    expect(n.for('s1', 4)).toEqual([]);
    expect(n.for('s3', 4)).toHaveLength(1);
  });
});
