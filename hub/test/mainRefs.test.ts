import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryHubStore } from '../src/adapters/memory/MemoryHubStore.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { Queries } from '../src/core/Queries.js';
import { describePg } from './postgres.js';
import { cell } from './storeFixtures.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

const cells = [
  { ...cell('R1', 1_000), component: 'dns', ref: 'main' },
  { ...cell('R2', 3_000), component: 'net', ref: 'main' },
  { ...cell('R3', 2_000), component: 'ntp', ref: 'release/2' },
  { ...cell('R4', 5_000), component: 'web' },
];

describe('/api/refs counts the default cells’ refs without listing the cells', () => {
  it('answers from SQLite’s count, as the memory store answers from its cells', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-refs-'));
    const sqlite = new SqliteHubStore(join(dir, 'hub.db'));
    const memory = new MemoryHubStore();
    cleanup.push(async () => {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    });
    for (const s of [sqlite, memory]) await s.commit({ cells });
    const listed = vi.spyOn(sqlite, 'listCells');
    const refs = await new Queries(sqlite, 120).refs.refs(10);
    expect(listed).not.toHaveBeenCalled();
    expect(refs).toEqual({
      refs: [
        {
          ref: 'main',
          cells: 2,
          lastPlannedAt: new Date(3_000).toISOString(),
          lastReceivedAt: new Date(3_000).toISOString(),
        },
        {
          ref: 'release/2',
          cells: 1,
          lastPlannedAt: new Date(2_000).toISOString(),
          lastReceivedAt: new Date(2_000).toISOString(),
        },
      ],
    });
    expect(await new Queries(memory, 120).refs.refs(10)).toEqual(refs);
  });
});

describePg('/api/refs counted by PostgreSQL', (server) => {
  it('answers as the memory store does, listing no cell', async () => {
    const store = new PostgresHubStore(
      new PgDatabase({ url: await server().createDatabase(), password: server().password }),
    );
    cleanup.push(() => store.close());
    const memory = new MemoryHubStore();
    for (const s of [store, memory]) await s.commit({ cells });
    const listed = vi.spyOn(store, 'listCells');
    expect(await new Queries(store, 120).refs.refs(10)).toEqual(await new Queries(memory, 120).refs.refs(10));
    expect(listed).not.toHaveBeenCalled();
  });
});
