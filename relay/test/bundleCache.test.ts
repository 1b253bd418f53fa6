import { afterEach, describe, expect, it } from 'vitest';
import { cache, MB, runCleanup } from './bundleFixtures.js';

afterEach(runCleanup);

describe("the relay's cache of bundles to outposts", () => {
  it('keeps one copy for several sites and refuses, counted, a blob over the quota', () => {
    const { cache: c, counters } = cache(5 * MB);
    const a = 'a'.repeat(64);
    const b = 'b'.repeat(64);
    c.note([{ sha256: a, size: 3 * MB, name: 'a', site: 'ship-7', expiresAt: 10_000 }]);
    c.note([{ sha256: a, size: 3 * MB, name: 'a', site: 'ship-8', expiresAt: 20_000 }]);
    c.note([{ sha256: b, size: 3 * MB, name: 'b', site: 'ship-7', expiresAt: 10_000 }]);
    const [first, second] = c.list();
    expect(first).toMatchObject({
      sha256: a,
      sites: ['ship-7', 'ship-8'],
      state: 'fetching',
      expiresAt: 20_000,
    });
    expect(second).toMatchObject({ sha256: b, state: 'refused' });
    expect(second?.reason).toMatch(/over the relay's bundle quota/);
    expect(counters.get('bundles_refused_quota')).toBe(1);
    expect(c.nextToFetch()?.sha256).toBe(a);
  });

  it('keeps a superseded blob while another live bundle still needs it (one copy)', () => {
    const { cache: c, counters } = cache();
    const a = 'a'.repeat(64);
    const b = 'b'.repeat(64);
    const item = { size: 10, name: 'cfg', expiresAt: 10_000 };
    c.note([
      { ...item, sha256: a, site: 'ship-7', bundleId: 'b1' },
      { ...item, sha256: a, site: 'ship-8', bundleId: 'b1' },
      { ...item, sha256: a, site: 'ship-9', bundleId: 'other' },
    ]);
    // b2 replaces b1 at ship-7 only: ship-8 (and the unrelated bundle at ship-9) still need the bytes.
    c.note([{ ...item, sha256: b, site: 'ship-7', bundleId: 'b2', supersedes: ['b1'] }]);
    c.note([{ ...item, sha256: b, site: 'ship-8', bundleId: 'b2', supersedes: ['b1'] }]);
    expect(c.list().find((x) => x.sha256 === a)?.state).toBe('fetching');
    expect(c.removeSuperseded()).toEqual([]);
    // Once the last live one is replaced too, the blob goes.
    c.note([{ ...item, sha256: b, site: 'ship-9', bundleId: 'o2', supersedes: ['other'] }]);
    expect(c.list().find((x) => x.sha256 === a)?.state).toBe('superseded');
    expect(c.removeSuperseded().map((x) => x.sha256)).toEqual([a]);
    expect(counters.get('bundles_superseded')).toBe(1);

    // A republication with the same bytes keeps the one copy it needs.
    c.note([{ ...item, sha256: b, site: 'ship-7', bundleId: 'b3', supersedes: ['b2'] }]);
    expect(c.list().find((x) => x.sha256 === b)?.state).toBe('fetching');
    expect(counters.get('bundles_superseded')).toBe(1);
  });
});
