import { afterEach, describe, expect, it } from 'vitest';
import type { AnnouncedBlob, PublicationCache } from '../src/ports/PublicationCache.js';

/** What an adapter is built from: the quota, the clock and the counter sink the contract controls. */
export interface PublicationCacheDeps {
  quotaBytes: number;
  now: () => number;
  count: (name: string, by: number) => void;
}

/** A fresh adapter for one test. */
export type PublicationCacheSetup = (deps: PublicationCacheDeps) => {
  cache: PublicationCache;
  cleanup?: () => void;
};

export const MB = 1024 * 1024;
const [A, B, C, D] = ['a', 'b', 'c', 'd'].map((x) => x.repeat(64)) as [string, string, string, string];

/** An announcement of `sha256` at `site` (10 bytes, live until 10 000 unless said otherwise). */
const blob = (sha256: string, site: string, over: Partial<AnnouncedBlob> = {}): AnnouncedBlob => ({
  sha256,
  size: 10,
  name: 'cfg',
  site,
  expiresAt: 10_000,
  ...over,
});

/**
 * What every `PublicationCache` adapter promises (ports/PublicationCache.ts). `SqlitePublicationCache` and
 * `MemoryPublicationCache` both run it; a new adapter runs it too before the relay may use it.
 */
export function runPublicationCacheContract(name: string, setup: PublicationCacheSetup): void {
  describe(`PublicationCache contract: ${name}`, () => {
    const opened: ReturnType<PublicationCacheSetup>[] = [];
    afterEach(() => {
      for (const s of opened.splice(0)) s.cleanup?.();
    });
    const open = (quotaBytes = 1024 * MB) => {
      const clock = { t: 1_000 };
      const counters = new Map<string, number>();
      const s = setup({
        quotaBytes,
        now: () => clock.t,
        count: (n, by) => counters.set(n, (counters.get(n) ?? 0) + by),
      });
      opened.push(s);
      const state = (sha: string) => s.cache.list().find((x) => x.sha256 === sha)?.state;
      return { c: s.cache, clock, counters, state };
    };

    it('keeps one copy for several sites and refuses, counted, a blob over the quota', () => {
      const { c, counters } = open(5 * MB);
      c.note([blob(A, 'ship-7', { size: 3 * MB })]);
      c.note([blob(A, 'ship-8', { size: 3 * MB, expiresAt: 20_000 })]);
      c.note([blob(A, 'ship-7', { size: 3 * MB, expiresAt: 5_000 })]); // again: no second copy, no earlier expiry
      c.note([blob(B, 'ship-7', { size: 3 * MB, name: 'b' })]);
      const [first, second, ...rest] = c.list();
      expect(rest).toEqual([]);
      expect(first).toEqual({
        sha256: A,
        size: 3 * MB,
        name: 'cfg',
        sites: ['ship-7', 'ship-8'],
        state: 'fetching',
        fetched: 0,
        expiresAt: 20_000,
        reason: null,
      });
      expect(second).toMatchObject({ sha256: B, state: 'refused', sites: ['ship-7'] });
      expect(second?.reason).toMatch(/over the relay's publications quota/);
      expect(counters.get('bundles_refused_quota')).toBe(1);
      expect(c.nextToFetch()?.sha256).toBe(A);
    });

    it('counts only blobs it keeps against the quota: refused and superseded ones leave room', () => {
      const { c, counters } = open(6 * MB);
      c.note([blob(A, 'ship-7', { size: 3 * MB, publicationId: 'p1' })]);
      c.note([blob(B, 'ship-7', { size: 4 * MB })]); // over: refused
      c.note([blob(C, 'ship-7', { size: 2 * MB })]); // fits beside A (the refused B takes nothing)
      c.note([blob('e'.repeat(64), 'ship-7', { size: MB, publicationId: 'p2', supersedes: ['p1'] })]); // A goes
      c.note([blob(D, 'ship-7', { size: 3 * MB })]); // fits in the room A left
      expect(c.list().map((x) => [x.sha256[0], x.state])).toEqual([
        ['a', 'superseded'],
        ['b', 'refused'],
        ['c', 'fetching'],
        ['e', 'fetching'],
        ['d', 'fetching'],
      ]);
      expect(counters.get('bundles_refused_quota')).toBe(1);
    });

    it('hands out blobs to fetch oldest announcement first (sha256 breaks a tie), and lists them in that order', () => {
      const { c, clock } = open();
      c.note([blob(C, 'ship-7')]);
      clock.t = 2_000;
      c.note([blob(B, 'ship-7'), blob(A, 'ship-8')]);
      expect(c.nextToFetch()?.sha256).toBe(C);
      c.held(C);
      expect(c.nextToFetch()?.sha256).toBe(A);
      expect(c.list().map((x) => x.sha256)).toEqual([C, B, A]);
      c.refuse(A, 'bad');
      c.held(B);
      expect(c.nextToFetch()).toBeNull();
    });

    it('keeps the resume offset, holds a whole blob (counted), and refuses one for good (counted)', () => {
      const { c, counters } = open();
      c.note([blob(A, 'ship-7', { size: 3 * MB }), blob(B, 'ship-7', { size: MB })]);
      c.setFetched(A, MB);
      expect(c.nextToFetch()).toMatchObject({ sha256: A, fetched: MB, state: 'fetching' });
      c.held(A);
      expect(c.list()[0]).toMatchObject({ sha256: A, state: 'held', fetched: 3 * MB });
      expect(counters.get('bundles_fetched')).toBe(1);
      c.refuse(B, 'the fetched bytes do not match the sha256');
      expect(c.list()[1]).toMatchObject({
        state: 'refused',
        reason: 'the fetched bytes do not match the sha256',
      });
      expect(counters.get('bundles_refused')).toBe(1);
      expect(c.nextToFetch()).toBeNull();
    });

    it('removes what has expired (at its time, not before), answers it and counts it', () => {
      const { c, counters } = open();
      c.note([blob(A, 'ship-7', { expiresAt: 5_000 }), blob(B, 'ship-7', { expiresAt: 6_000 })]);
      expect(c.expire(4_999)).toEqual([]);
      expect(counters.has('bundles_expired')).toBe(false);
      expect(c.expire(5_000).map((x) => [x.sha256, x.expiresAt])).toEqual([[A, 5_000]]);
      expect(c.list().map((x) => x.sha256)).toEqual([B]);
      expect(counters.get('bundles_expired')).toBe(1);
      // An older manifest's announcement (no publication named) keeps its blob live until it expires.
      c.note([blob(C, 'ship-7', { expiresAt: 9_000 }), blob(C, 'ship-7', { publicationId: 'p1' })]);
      c.note([blob(D, 'ship-7', { publicationId: 'p2', supersedes: ['p1'] })]);
      expect(c.list().map((x) => [x.sha256[0], x.state])).toEqual([
        ['b', 'fetching'],
        ['c', 'fetching'],
        ['d', 'fetching'],
      ]);
      expect(
        c
          .expire(10_000)
          .map((x) => x.sha256[0])
          .sort(),
      ).toEqual(['b', 'c', 'd']);
      expect(counters.get('bundles_expired')).toBe(4);
    });

    it('keeps a superseded blob while another live publication still needs it (one copy)', () => {
      const { c, counters, state } = open();
      c.note([
        blob(A, 'ship-7', { publicationId: 'b1' }),
        blob(A, 'ship-8', { publicationId: 'b1' }),
        blob(A, 'ship-9', { publicationId: 'other' }),
      ]);
      // b2 replaces b1 at ship-7 only: ship-8 (and the unrelated publication at ship-9) still need the bytes.
      c.note([blob(B, 'ship-7', { publicationId: 'b2', supersedes: ['b1'] })]);
      c.note([blob(B, 'ship-8', { publicationId: 'b2', supersedes: ['b1'] })]);
      expect(state(A)).toBe('fetching');
      expect(c.removeSuperseded()).toEqual([]);
      // Once the last live one is replaced too, the blob goes.
      c.note([blob(B, 'ship-9', { publicationId: 'o2', supersedes: ['other'] })]);
      expect(state(A)).toBe('superseded');
      expect(c.list().find((x) => x.sha256 === A)?.reason).toMatch(/superseded by a later publication/);
      expect(c.removeSuperseded().map((x) => x.sha256)).toEqual([A]);
      expect(c.removeSuperseded()).toEqual([]);
      expect(counters.get('bundles_superseded')).toBe(1);

      // A republication with the same bytes keeps the one copy it needs.
      c.note([blob(B, 'ship-7', { publicationId: 'b3', supersedes: ['b2'] })]);
      expect(state(B)).toBe('fetching');
      expect(counters.get('bundles_superseded')).toBe(1);
    });

    it('neither revives nor counts twice a superseded publication announced again', () => {
      const { c, counters } = open();
      c.note([blob(A, 'ship-7', { publicationId: 'b1' })]);
      c.note([blob(B, 'ship-7', { publicationId: 'b2', supersedes: ['b1'] })]);
      expect(c.removeSuperseded().map((x) => x.sha256)).toEqual([A]);
      // A re-pulled downlink: the same announcements again.
      c.note([blob(A, 'ship-7', { publicationId: 'b1' })]);
      c.note([blob(B, 'ship-7', { publicationId: 'b2', supersedes: ['b1'] })]);
      expect(c.list().map((x) => x.sha256)).toEqual([B]);
      expect(counters.get('bundles_superseded')).toBe(1);
    });

    it('ignores a superseded publication announced after what replaced it', () => {
      const { c, counters } = open();
      c.note([blob(C, 'ship-7', { publicationId: 'b3', supersedes: ['b0'] })]);
      c.note([blob(D, 'ship-7', { publicationId: 'b0' })]);
      expect(c.list().map((x) => x.sha256)).toEqual([C]);
      expect(counters.has('bundles_superseded')).toBe(false);
      // At another site b0 was not replaced: there it is fetched.
      c.note([blob(D, 'ship-8', { publicationId: 'b0' })]);
      expect(c.list().map((x) => [x.sha256, x.sites])).toEqual([
        [C, ['ship-7']],
        [D, ['ship-8']],
      ]);
    });

    it('makes a superseded blob not yet removed live again when a live publication needs it', () => {
      const { c, state } = open();
      c.note([
        blob(A, 'ship-7', { publicationId: 'b1' }),
        blob(B, 'ship-7', { publicationId: 'c1', size: 20 }),
      ]);
      c.held(A);
      c.setFetched(B, 5);
      c.note([blob(C, 'ship-7', { publicationId: 'b2', supersedes: ['b1', 'c1'] })]);
      expect([state(A), state(B)]).toEqual(['superseded', 'superseded']);
      c.note([
        blob(A, 'ship-8', { publicationId: 'b1' }),
        blob(B, 'ship-8', { publicationId: 'c1', size: 20 }),
      ]);
      expect(c.list().slice(0, 2)).toEqual([
        expect.objectContaining({ sha256: A, state: 'held', reason: null, sites: ['ship-7', 'ship-8'] }),
        expect.objectContaining({ sha256: B, state: 'fetching', fetched: 5, reason: null }),
      ]);
      expect(c.removeSuperseded()).toEqual([]);
    });

    it('keeps a blob superseded while its last chunk was in flight superseded', () => {
      const { c, state } = open();
      c.note([blob(A, 'ship-7', { publicationId: 'b1' })]);
      c.note([blob(B, 'ship-7', { publicationId: 'b2', supersedes: ['b1'] })]);
      c.setFetched(A, 10);
      c.held(A);
      expect(state(A)).toBe('superseded');
      expect(c.removeSuperseded().map((x) => x.sha256)).toEqual([A]);
    });
  });
}
