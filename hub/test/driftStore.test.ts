import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { MemoryDriftStore } from '../src/adapters/memory/MemoryDriftStore.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresDriftStore } from '../src/adapters/postgres/PostgresDriftStore.js';
import { SqliteDriftStore } from '../src/adapters/sqlite/SqliteDriftStore.js';
import { Drift } from '../src/core/drift/Drift.js';
import type { RunRow } from '../src/ports/HubStore.js';
import { runDriftStoreContract } from './driftStoreContract.js';
import { describePg, lockWaits, reportingLockWaits } from './postgres.js';

// A fresh database per test on a machine shared with other work: give each more than the default 5 s.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

runDriftStoreContract('memory', () => {
  const store = new MemoryDriftStore();
  return { store, other: () => store, done: () => {} };
});

runDriftStoreContract('sqlite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drift-store-'));
  const store = new SqliteDriftStore(join(dir, 'drift.db'));
  return {
    store,
    // `hub waiver` in another process: another connection to the same file.
    other: () => new SqliteDriftStore(join(dir, 'drift.db')),
    done: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const driftRun = (site: number, n: number): RunRow =>
  ({
    runId: `r-${site}-${n}`,
    site: `s-${site}`,
    environment: 'prod',
    component: 'net',
    plannedAt: n * 1000,
    summary: {
      status: 'drift',
      drifted: [{ address: 'aws_s3_bucket.logs', type: 'aws_s3_bucket', attributes: ['tags'] }],
    },
  }) as unknown as RunRow;

describePg('the drift store on PostgreSQL', (server) => {
  // Another hub: a pool of its own on the same database.
  const storeOn = (url: string) =>
    new PostgresDriftStore(new PgDatabase({ url, password: server().password }));

  runDriftStoreContract('postgres', async () => {
    const url = await server().createDatabase();
    const store = storeOn(url);
    return { store, other: () => storeOn(url), done: () => store.close() };
  });

  it('lets one hub at a time advance episodes: the second waits in the database until the first is done', async () => {
    const url = await server().createDatabase();
    const a = storeOn(url);
    // the second hub's sessions: the database tells them when they wait on a lock
    const bDb = new PgDatabase({ url: reportingLockWaits(url), password: server().password });
    const bWaits = lockWaits(bDb.pool);
    const b = new PostgresDriftStore(bDb);
    const admin = await server().client(url);
    try {
      const order: string[] = [];
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let entered = () => {};
      const aIn = new Promise<void>((r) => {
        entered = r;
      });
      const first = a.exclusive(async () => {
        order.push('a in');
        entered();
        await held;
        order.push('a out');
      });
      await aIn;
      const second = b.exclusive(async () => {
        order.push('b in');
      });
      // the database's own report that the second hub waits on the lock, then what it shows
      expect(await bWaits.next()).toMatch(/still waiting for ExclusiveLock on advisory lock/);
      const r = await admin.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 7 AND NOT granted",
      );
      expect(r.rows[0].n).toBe(1);
      expect(order).toEqual(['a in']);
      release();
      await Promise.all([first, second]);
      expect(order).toEqual(['a in', 'a out', 'b in']);
    } finally {
      await admin.end();
      await a.close();
      await b.close();
    }
  });

  it('opens one episode when two hubs observe the same drift of a cell at once', async () => {
    const url = await server().createDatabase();
    const stores = [storeOn(url), storeOn(url)];
    try {
      const hubs = stores.map(
        (drift) =>
          new Drift({
            drift,
            commit: async () => {},
            clock: { now: () => 10_000 },
            ids: { next: () => '01J' },
            webhookUrls: [],
          }),
      );
      // Consecutive plans of each cell, each reaching a different hub (two relays), observed at once.
      const cells = [...Array(10).keys()];
      await Promise.all([
        hubs[0]?.observe(cells.map((i) => driftRun(i, 1))),
        hubs[1]?.observe(cells.map((i) => driftRun(i, 2))),
      ]);
      // Whichever hub went first, each cell has one open episode, advanced by the later plan (the earlier
      // one, when it comes second, is a late run and skipped).
      const open = (await stores[0]?.listOpen()) ?? [];
      expect(open.map((e) => e.site).sort()).toEqual(cells.map((i) => `s-${i}`).sort());
      expect(new Set(open.map((e) => e.lastRunId.replace(/^r-\d+-/, '')))).toEqual(new Set(['2']));
    } finally {
      for (const s of stores) await s.close();
    }
  });
});
