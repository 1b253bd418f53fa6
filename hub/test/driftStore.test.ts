import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { MemoryDriftStore } from '../src/adapters/memory/MemoryDriftStore.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresDriftStore } from '../src/adapters/postgres/PostgresDriftStore.js';
import { SqliteDriftStore } from '../src/adapters/sqlite/SqliteDriftStore.js';
import { runDriftStoreContract } from './driftStoreContract.js';
import { describePg } from './postgres.js';

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

describePg('the drift store on PostgreSQL', (server) => {
  runDriftStoreContract('postgres', async () => {
    const url = await server().createDatabase();
    const store = new PostgresDriftStore(new PgDatabase({ url, password: server().password }));
    return {
      store,
      // Another hub: a pool of its own on the same database.
      other: () => new PostgresDriftStore(new PgDatabase({ url, password: server().password })),
      done: () => store.close(),
    };
  });
});
