import { until as untilReached } from '@driftline/protocol/testing';
import { expect, it, vi } from 'vitest';
import { LATEST_VERSION, migrate, SchemaTooNewError } from '../src/adapters/postgres/migrate.js';
import { MIGRATIONS } from '../src/adapters/postgres/migrations.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { PostgresPublicationStore } from '../src/adapters/postgres/PostgresPublicationStore.js';
import { PG_PRUNE_STEP_CELLS, pruneStep } from '../src/adapters/postgres/pruneSteps.js';
import type { RunRow } from '../src/ports/HubStore.js';
import { describePg } from './postgres.js';
import { runPublicationStoreContract } from './publicationStoreContract.js';
import { runHubStoreContract } from './storeContract.js';
import { cell, run } from './storeFixtures.js';

// A fresh database per test on a machine shared with other work: give each more than the default 5 s.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

describePg('PostgreSQL stores', (server) => {
  const database = async () =>
    new PgDatabase({ url: await server().createDatabase(), password: server().password });

  runHubStoreContract('postgres', async () => {
    const store = new PostgresHubStore(await database());
    return { store, done: () => store.close() };
  });

  runPublicationStoreContract('postgres', async () => {
    const publications = new PostgresPublicationStore(await database());
    return { publications, done: () => publications.close() };
  });

  it('answers a query whose connection is cut with a store error, not an uncaught exception', async () => {
    const url = await server().createDatabase();
    const db = new PgDatabase({ url, password: server().password }).retain();
    const admin = await server().client(url);
    try {
      await db.ping();
      const slow = db.query({ name: 'slow', text: "SELECT pg_sleep(30), 'driftline-cut-me' AS tag" }).then(
        () => null,
        (e: unknown) => e,
      );
      // The query sees the cut as its rejection; the pool then hands out a fresh connection.
      await untilReached(async () => {
        const r = await admin.query(
          "SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE query LIKE '%driftline-cut-me%' AND pid <> pg_backend_pid()",
        );
        return r.rows.length > 0;
      }, 'the slow query in pg_stat_activity, to cut it (the slow query never appeared)');
      expect(await slow).toBeInstanceOf(Error);
      await db.ping(); // the pool gives a fresh connection
    } finally {
      await admin.end();
      await db.close();
    }
  });

  it('applies every migration once, in order, recorded in schema_migrations', async () => {
    const url = await server().createDatabase();
    const c = await server().client(url);
    try {
      const first = await migrate(c);
      expect(first.applied.map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(first.version).toBe(LATEST_VERSION);
      expect((await migrate(c)).applied).toEqual([]);
      const rows = await c.query('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(rows.rows).toEqual(MIGRATIONS.map(({ version, name }) => ({ version, name })));
    } finally {
      await c.end();
    }
  });

  it('lets two hubs starting at once migrate the same database: one applies, the other finds it done', async () => {
    const url = await server().createDatabase();
    const clients = await Promise.all([0, 1].map(() => server().client(url)));
    try {
      const results = await Promise.all(clients.map((c) => migrate(c)));
      const applied = results.map((r) => r.applied.length).sort();
      expect(applied).toEqual([0, MIGRATIONS.length]);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });

  it('migrates a database at an earlier version and keeps its rows', async () => {
    const url = await server().createDatabase();
    const c = await server().client(url);
    try {
      await migrate(c, MIGRATIONS.slice(0, 1));
      await c.query(
        `INSERT INTO peers (token_sha256, row) VALUES ('t', '{"tokenSha256":"t","name":"relay-1","sites":["*"]}')`,
      );
    } finally {
      await c.end();
    }
    const db = new PgDatabase({ url, password: server().password });
    const store = new PostgresHubStore(db);
    const bundles = new PostgresPublicationStore(db);
    try {
      expect((await store.peerByToken('t'))?.name).toBe('relay-1');
      expect(await bundles.listPublications()).toEqual([]);
    } finally {
      await store.close();
      await bundles.close();
    }
  });

  it('refuses a database migrated by a newer hub, naming both versions', async () => {
    const url = await server().createDatabase();
    const c = await server().client(url);
    try {
      const future = [...MIGRATIONS, { version: LATEST_VERSION + 1, name: 'future', sql: 'SELECT 1' }];
      await migrate(c, future);
      await expect(migrate(c)).rejects.toBeInstanceOf(SchemaTooNewError);
      await expect(migrate(c)).rejects.toThrow(`version ${LATEST_VERSION + 1}, newer than this hub knows`);
    } finally {
      await c.end();
    }
  });

  it('keeps one row per bundle id however many commits (or hubs) store it', async () => {
    const db = new PgDatabase({ url: await server().createDatabase(), password: server().password });
    const [a, b] = [new PostgresHubStore(db), new PostgresHubStore(db)];
    try {
      await Promise.all([a, b, a, b].map((s) => s.commit({ bundles: [{ id: 'B1', receivedAt: 1 }] })));
      const n = await db.pool.query('SELECT count(*)::int AS n FROM bundles');
      expect(n.rows[0].n).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('orders runs by byte value whatever the database collation, as SQLite does', async () => {
    const url = await server().createDatabase({ icuLocale: 'en-US' });
    const c = await server().client(url);
    // The database's own order is a language's (a, b, B): the store's must not be.
    const order = await c.query("SELECT x FROM unnest(ARRAY['b', 'B', 'a', '_']) x ORDER BY x");
    await c.end();
    expect(order.rows.map((r) => r.x)).not.toEqual(['B', '_', 'a', 'b']);
    const store = new PostgresHubStore(new PgDatabase({ url, password: server().password }));
    try {
      const run = (runId: string) => ({
        runId,
        site: 's',
        agent: 'a',
        environment: 'e',
        component: 'c',
        status: 'clean' as const,
        counts: null,
        reason: null,
        plannedAt: 1,
        receivedAt: 1,
        unchanged: false,
        summary: {
          component: 'c',
          environment: 'e',
          status: 'clean' as const,
          startedAt: '',
          finishedAt: '',
        },
        detailBlob: null,
        docId: 'd',
      });
      await store.commit({ runs: ['a', 'B', '_', 'b'].map(run) });
      const q = { site: 's', environment: 'e', component: 'c', limit: 10 };
      expect((await store.listRuns(q)).map((r) => r.runId)).toEqual(['b', 'a', '_', 'B']);
    } finally {
      await store.close();
    }
  });

  it('rolls a commit back whole when one of its writes fails', async () => {
    const store = new PostgresHubStore(await database());
    try {
      const user = {
        name: 'ada',
        roles: ['viewer' as const],
        tokenSha256: 'u',
        createdAt: 1,
        revokedAt: null,
      };
      await store.commit({ users: [user] });
      // A second user with the same token hash breaks the unique index: nothing of the commit stays.
      await expect(
        store.commit({
          peers: [{ tokenSha256: 'p', name: 'r', sites: [] }],
          users: [{ ...user, name: 'bob' }],
        }),
      ).rejects.toThrow();
      expect(await store.peerByToken('p')).toBeNull();
      expect(await store.getUser('bob')).toBeNull();
      await store.commit({ peers: [{ tokenSha256: 'p', name: 'r', sites: [] }] });
      expect((await store.peerByToken('p'))?.name).toBe('r');
    } finally {
      await store.close();
    }
  });

  it('prunes in bounded steps: one transaction reads at most 200 cells and says where the next begins', async () => {
    const db = await database();
    const store = new PostgresHubStore(db);
    try {
      const comp = (i: number) => `c${String(i).padStart(4, '0')}`;
      const runsOf = (i: number) =>
        [1, 2, 3].map((k) => ({
          ...run(`01J${String(i).padStart(4, '0')}${k}`.padEnd(26, '0'), 1000 + k),
          component: comp(i),
        }));
      // Each cell shows its newest run and has three history rows, all old.
      const cells = Array.from({ length: 450 }, (_, i) => ({
        ...cell((runsOf(i)[2] as RunRow).runId, 1003),
        component: comp(i),
      }));
      const history = cells.flatMap((c) => [1, 2, 3].map((k) => ({ ...c, receivedAt: 1000 + k })));
      await store.commit({ runs: Array.from({ length: 450 }, (_, i) => runsOf(i)).flat(), cells, history });
      const policy = { maxRunsPerCell: 1, maxAgeMs: 1e12, failureMaxAgeMs: 1e12 };
      const first = await pruneStep(db, ['', '', ''], policy, 10_000);
      expect(first).toEqual({
        runs: 2 * PG_PRUNE_STEP_CELLS,
        history: 0,
        next: ['ship-7', 'prod', comp(199)],
      });
      // The cells after the step are untouched until their own step.
      const left = (i: number) =>
        store.listRuns({ site: 'ship-7', environment: 'prod', component: comp(i), limit: 10 });
      expect(await left(199)).toHaveLength(1);
      expect(await left(200)).toHaveLength(3);
      expect(await store.prune(policy, 10_000)).toMatchObject({ runs: 500, history: 0 });
      expect(await left(449)).toHaveLength(1);
      // History ages out step by step too, the newest row of each cell kept.
      const aged = await store.prune({ ...policy, maxAgeMs: 1, failureMaxAgeMs: 1 }, 10_000);
      expect(aged.history).toBe(900);
    } finally {
      await store.close();
    }
  });
});
