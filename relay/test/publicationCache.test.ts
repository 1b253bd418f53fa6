import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryPublicationCache } from '../src/adapters/memory/MemoryPublicationCache.js';
import { SqlitePublicationCache } from '../src/adapters/sqlite/SqlitePublicationCache.js';
import { migrate } from '../src/adapters/sqlite/schema.js';
import { tmp } from './helpers.js';
import { runPublicationCacheContract } from './publicationCacheContract.js';
import { cache, runCleanup } from './publicationFixtures.js';

runPublicationCacheContract('SqlitePublicationCache', ({ quotaBytes, now, count }) => {
  const dir = tmp('relay-publications-');
  const db = new Database(join(dir, 'relay.sqlite'));
  migrate(db);
  return {
    cache: new SqlitePublicationCache(db, quotaBytes, now, count),
    cleanup: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

runPublicationCacheContract('MemoryPublicationCache', ({ quotaBytes, now, count }) => ({
  cache: new MemoryPublicationCache(quotaBytes, now, count),
}));

afterEach(runCleanup);

describe('SqlitePublicationCache on disk', () => {
  it('reads back states, resume offsets and superseded publications after a restart', () => {
    const { dir, cache: c, counters, clock } = cache();
    const [a, b, d] = ['a', 'b', 'd'].map((x) => x.repeat(64)) as [string, string, string];
    const item = { size: 100, name: 'cfg', site: 'ship-7', expiresAt: 10_000 };
    c.note([
      { ...item, sha256: a, publicationId: 'b1' },
      { ...item, sha256: d, site: 'ship-8' },
    ]);
    c.setFetched(d, 40);
    c.held(a);
    clock.t = 1_500;
    c.note([{ ...item, sha256: b, publicationId: 'b2', supersedes: ['b1'] }]);
    const before = c.list();

    const db = new Database(join(dir, 'relay.sqlite'));
    migrate(db);
    const again = new SqlitePublicationCache(
      db,
      1024,
      () => 2_000,
      (n, by) => counters.set(n, by),
    );
    try {
      expect(again.list()).toEqual(before);
      expect(again.nextToFetch()).toMatchObject({ sha256: d, fetched: 40 });
      // b1 was superseded before the restart: announced again, it is still ignored.
      again.note([{ ...item, sha256: a, publicationId: 'b1' }]);
      expect(again.removeSuperseded().map((x) => x.sha256)).toEqual([a]);
      expect(again.list().map((x) => x.sha256)).toEqual([d, b]);
    } finally {
      db.close();
    }
  });
});
