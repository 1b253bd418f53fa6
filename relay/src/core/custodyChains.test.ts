import { describe, expect, it } from 'vitest';
import { CustodyChains } from './custodyChains.js';

describe('CustodyChains', () => {
  it('gives each bundle the records it came with, once each, the earliest take, and forgets on forward', () => {
    const c = new CustodyChains(3);
    c.took(['a', 'b'], ['r1', 'r2'], 100);
    c.took(['c'], ['r2', 'r3'], 50);
    c.took(['d'], [], 10); // no records: nothing to keep
    expect(c.of(['a', 'c', 'd'])).toEqual({ records: ['r1', 'r2', 'r3'], tookAt: 50 });
    c.forget(['c']);
    expect(c.of(['c'])).toEqual({ records: [], tookAt: null });
    // bounded: the oldest goes first
    c.took(['e', 'f'], ['r4'], 200);
    expect(c.of(['a']).records).toEqual([]);
    expect(c.of(['f']).records).toEqual(['r4']);
  });
});
