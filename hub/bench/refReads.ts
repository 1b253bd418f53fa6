/**
 * The ref reads of decision 640 at fleet size (not a test): a store filled straight with `--sites` ×
 * `--cells` default cells of `main` whose agents' patterns allow `main` on every cell, then timed (p50 of
 * `--reads`): which of the agents' cells are default cells of the ref, by their rows (`getCells`, before)
 * and by the ref index (`refDefaultKeys`, both ways); the whole gate; and one page of the ref's matrix
 * (each page computes the whole matrix; `hub refs report` reads every page).
 *
 *   npx tsx hub/bench/refReads.ts [--sites 1000] [--cells 200] [--store sqlite|postgres] [--reads 5]
 *
 * Prints one JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MATRIX_PAGE_MAX } from '@driftline/protocol';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { Queries } from '../src/core/Queries.js';
import { cellsAllowing, RefQueries } from '../src/core/RefQueries.js';
import type { AgentRow, CellKey, CellRow, HubStore } from '../src/ports/HubStore.js';
import { PgServer } from '../test/postgres.js';

const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: '1000' },
    cells: { type: 'string', default: '200' },
    store: { type: 'string', default: 'sqlite' },
    reads: { type: 'string', default: '5' },
  },
});
const sites = Number(values.sites);
const perSite = Number(values.cells);
const reads = Number(values.reads);
const say = (m: string) => process.stderr.write(`[refReads] ${m}\n`);
const site = (i: number) => `site-${String(i).padStart(4, '0')}`;
const comp = (j: number) => ({
  environment: `env-${j % 4}`,
  component: `comp-${String(j).padStart(3, '0')}`,
});

const dir = mkdtempSync(join(tmpdir(), 'ref-reads-'));
const pg = values.store === 'postgres' ? await PgServer.start() : null;
const store: HubStore & { close(): unknown } = pg
  ? new PostgresHubStore(new PgDatabase({ url: await pg.createDatabase(), password: pg.password }))
  : new SqliteHubStore(join(dir, 'hub.db'));

const agent = (i: number): AgentRow => ({
  site: site(i),
  agent: 'a1',
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt: null,
  version: null,
  lastContactAt: 1000,
  queueDepth: null,
  oldestUnsentAt: null,
  clockOffsetMs: null,
  offsetSampledAt: null,
  upstream: null,
  cadenceS: {},
  contactIntervalS: null,
  contactWindows: [],
  refs: Object.fromEntries(
    Array.from({ length: perSite }, (_, j) => [
      `${comp(j).environment}/${comp(j).component}`,
      ['main', 'pr/*'],
    ]),
  ),
});
const cell = (i: number, j: number): CellRow => ({
  site: site(i),
  ...comp(j),
  agent: 'a1',
  status: j === 7 ? 'changes' : 'clean',
  counts: { add: 0, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 },
  reason: null,
  runId: `01JA${String(i * perSite + j).padStart(22, '0')}`,
  plannedAt: 1000,
  receivedAt: 1000,
  expectedIntervalS: 3600,
  planHash: null,
  staleNotifiedFor: null,
  ref: 'main',
  commit: 'c'.repeat(40),
});

const filled = Date.now();
for (let i = 0; i < sites; i += 25) {
  const block = Array.from({ length: Math.min(25, sites - i) }, (_, k) => i + k);
  await store.commit({
    agents: block.map(agent),
    // One cell of the fleet is left unplanned: the gate has a pending cell its patterns allow.
    cells: block.flatMap((s) =>
      Array.from({ length: perSite }, (_, j) => cell(s, j)).filter((_, j) => s !== 0 || j !== 0),
    ),
  });
}
say(`filled ${sites} × ${perSite} in ${((Date.now() - filled) / 1000).toFixed(1)} s`);

async function p50(name: string, f: () => Promise<unknown>): Promise<[string, number]> {
  const ms: number[] = [];
  for (let r = 0; r < reads; r++) {
    const t = performance.now();
    await f();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const m = Math.round(ms[Math.floor(ms.length / 2)] ?? 0);
  say(`${name}: ${m} ms`);
  return [name, m];
}

const asked: CellKey[] = [...cellsAllowing(await store.listAgentRefs(), 'main').values()].map(
  ([s, environment, component]) => ({ site: s, environment, component }),
);
/** The gate's look-up before decision 640: the rows of the asked cells, 1,000 at a time. */
async function byRows(): Promise<number> {
  let n = 0;
  for (let i = 0; i < asked.length; i += 1_000)
    for (const c of await store.getCells(asked.slice(i, i + 1_000))) if (c?.ref === 'main') n++;
  return n;
}
async function byIndexKeys(): Promise<number> {
  let n = 0;
  for (let i = 0; i < asked.length; i += 10_000)
    n += (await store.refDefaultKeys({ ref: 'main', keys: asked.slice(i, i + 10_000) })).length;
  return n;
}
const same = [await byRows(), await byIndexKeys(), (await store.refDefaultKeys({ ref: 'main' })).length];
say(`default cells of main among ${asked.length} asked: ${same.join(' / ')}`);

/** The store as the gate read it before: its look-up of the asked cells answered from their rows. */
const rowsStore = new Proxy(store, {
  get: (t, k, r) =>
    k === 'refDefaultKeys'
      ? async () =>
          (
            await Promise.all(
              Array.from({ length: Math.ceil(asked.length / 1_000) }, (_, i) =>
                t.getCells(asked.slice(i * 1_000, (i + 1) * 1_000)),
              ),
            )
          )
            .flat()
            .filter((c): c is CellRow => c?.ref === 'main')
      : Reflect.get(t, k, r),
});
const queries = new Queries(store, 120);
const timings = Object.fromEntries([
  await p50('defaultsByRows', byRows),
  await p50('defaultsByIndexKeys', byIndexKeys),
  await p50('defaultsByIndexRange', () => store.refDefaultKeys({ ref: 'main' })),
  await p50('gateByRows', () => new RefQueries(rowsStore).status('main', 'c'.repeat(40))),
  await p50('gate', () => new RefQueries(store).status('main', 'c'.repeat(40))),
  await p50('refMatrixPage', () => queries.matrix({ ref: 'main' }, 2000)),
]);
const cellsOfRef = (await queries.matrix({ ref: 'main' }, 2000)).length;
console.log(
  JSON.stringify({
    store: values.store,
    sites,
    cells: perSite,
    asked: asked.length,
    found: same,
    refMatrixCells: cellsOfRef,
    refMatrixPages: Math.ceil(cellsOfRef / MATRIX_PAGE_MAX),
    p50Ms: timings,
  }),
);
await store.close();
await pg?.stop();
rmSync(dir, { recursive: true, force: true });
