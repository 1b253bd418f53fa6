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

describe('/api/refs totals the refs without listing the cells', () => {
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

const blocked = [
  { ...cell('R5', 4_000, 'blocked'), component: 'db', ref: 'main', needs: ['provider aws 5.1'] },
  {
    ...cell('R6', 6_000, 'blocked'),
    site: 'ship-9',
    component: 'net',
    needs: ['provider aws 5.1', 'commit abc'],
  },
  {
    ...cell('R7', 7_000, 'blocked'),
    site: 'ship-9',
    component: 'web',
    atRef: 'pr/1',
    ref: 'pr/1',
    needs: ['commit abc'],
  },
];

describe('/api/needs reads the blocked cells through the read model', () => {
  it('answers without listing the cells, as the memory store answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-needs-'));
    const sqlite = new SqliteHubStore(join(dir, 'hub.db'));
    const memory = new MemoryHubStore();
    cleanup.push(async () => {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    });
    for (const s of [sqlite, memory]) await s.commit({ cells: [...cells, ...blocked] });
    const listed = vi.spyOn(sqlite, 'listCells');
    const needs = await new Queries(sqlite, 120).refs.needs();
    expect(listed).not.toHaveBeenCalled();
    expect(
      needs.needs.map((n) => `${n.site} ${n.need} ${n.cells.map((c) => c.component).join(',')} ${n.since}`),
    ).toEqual([
      `ship-7 provider aws 5.1 db ${new Date(4_000).toISOString()}`,
      `ship-9 commit abc net,web ${new Date(6_000).toISOString()}`,
      `ship-9 provider aws 5.1 net ${new Date(6_000).toISOString()}`,
    ]);
    expect(await new Queries(memory, 120).refs.needs()).toEqual(needs);
    expect((await new Queries(sqlite, 120).refs.needs('ship-7')).needs).toHaveLength(1);
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
  it('answers /api/needs as the memory store does, listing no cell', async () => {
    const store = new PostgresHubStore(
      new PgDatabase({ url: await server().createDatabase(), password: server().password }),
    );
    cleanup.push(() => store.close());
    const memory = new MemoryHubStore();
    for (const s of [store, memory]) await s.commit({ cells: [...cells, ...blocked] });
    const listed = vi.spyOn(store, 'listCells');
    const needs = await new Queries(store, 120).refs.needs();
    expect(needs.needs).toHaveLength(3);
    expect(needs).toEqual(await new Queries(memory, 120).refs.needs());
    expect(listed).not.toHaveBeenCalled();
  });
});
