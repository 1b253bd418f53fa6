/**
 * The ref reads of decision 640 at fleet size (not a test): a store filled straight with `--sites` ×
 * `--cells` default cells of `main` whose agents' patterns allow `main` on every cell, then timed (p50 of
 * `--reads`): which of the agents' cells are default cells of the ref, by their rows (`getCells`, before)
 * and by the ref index (`refDefaultKeys`, both ways); the whole gate; the ref's matrix computed whole (how
 * each page was answered before decision 650); and pages of it as `/api/matrix?ref=` answers them now
 * (docs/decisions/650-ref-matrix-pages.md): the first, one mid-fleet, one site's, the first of a PR ref
 * its patterns allow everywhere and no cell planned (all no-data), and every page once (`hub refs report`).
 * `--pages-only` skips the reads before decisions 640 and 650 (`npm run bench`'s refReads part).
 *
 *   npx tsx hub/bench/refReads.ts [--sites 1000] [--cells 200] [--store sqlite|postgres] [--reads 5]
 *     [--pages-only]
 *
 * Prints one JSON object: p50 and p95 of each read (ms), and whether every page read's p95 is within
 * the dashboard's 300 ms (issue 60).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { MatrixQuery } from '@driftline/protocol';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { encodeCellCursor } from '../src/core/fleet/MatrixWindow.js';
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
    'pages-only': { type: 'boolean', default: false },
  },
});
const pagesOnly = values['pages-only'];
/** The dashboard's budget for one read at 1,000 × 200 (issue 60). */
const GOAL_MS = 300;
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

/** p50 and p95 of `--reads` reads of `name`. */
async function timed(
  name: string,
  f: () => Promise<unknown>,
): Promise<[string, { p50: number; p95: number }]> {
  const ms: number[] = [];
  for (let r = 0; r < reads; r++) {
    const t = performance.now();
    await f();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => Math.round(ms[Math.min(ms.length - 1, Math.ceil(q * ms.length) - 1)] ?? 0);
  say(`${name}: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms`);
  return [name, { p50: at(0.5), p95: at(0.95) }];
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
const same = pagesOnly
  ? []
  : [await byRows(), await byIndexKeys(), (await store.refDefaultKeys({ ref: 'main' })).length];
if (!pagesOnly) say(`default cells of main among ${asked.length} asked: ${same.join(' / ')}`);

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
const NOW = 2000;
const queries = new Queries(store, 120);
const page = (q: Omit<MatrixQuery, 'at' | 'ref'> & { ref: string }) => queries.refPages.page(q, NOW);
const mid = { site: site(Math.floor(sites / 2)), ...comp(0) };
/** Every page of the ref's matrix by `next`, as `hub refs report` reads them. */
async function everyPage(): Promise<{ cells: number; pages: number; ms: number }> {
  const t = performance.now();
  let cells = 0;
  let pages = 0;
  let cursor: string | null = null;
  do {
    const p = await page({ ref: 'main', ...(cursor ? { cursor } : {}) });
    cells += p.cells.length;
    pages++;
    cursor = p.next;
  } while (cursor);
  return { cells, pages, ms: Math.round(performance.now() - t) };
}
const pageReads = [
  await timed('refMatrixFirstPage', () => page({ ref: 'main' })),
  await timed('refMatrixMidPage', () => page({ ref: 'main', cursor: encodeCellCursor(mid) })),
  await timed('refMatrixSitePage', () => page({ ref: 'main', site: mid.site })),
  await timed('refMatrixNoDataPage', () => page({ ref: 'pr/1' })),
];
const before = pagesOnly
  ? []
  : [
      await timed('defaultsByRows', byRows),
      await timed('defaultsByIndexKeys', byIndexKeys),
      await timed('defaultsByIndexRange', () => store.refDefaultKeys({ ref: 'main' })),
      await timed('gateByRows', () => new RefQueries(rowsStore).status('main', 'c'.repeat(40))),
      // Each page of the ref's matrix before decision 650: the whole matrix computed, then paged.
      await timed('refMatrixWhole', () => queries.matrix({ ref: 'main' }, NOW)),
    ];
const timings = [
  ...before,
  await timed('gate', () => new RefQueries(store).status('main', 'c'.repeat(40))),
  ...pageReads,
];
const every = await everyPage();
say(`every page of main: ${every.pages} pages, ${every.cells} cells in ${every.ms} ms`);
console.log(
  JSON.stringify({
    store: values.store,
    sites,
    cells: perSite,
    asked: asked.length,
    found: same,
    refMatrixCells: every.cells,
    refMatrixPages: every.pages,
    refMatrixEveryPageMs: every.ms,
    p50Ms: Object.fromEntries(timings.map(([k, v]) => [k, v.p50])),
    p95Ms: Object.fromEntries(timings.map(([k, v]) => [k, v.p95])),
    goalMs: GOAL_MS,
    pass: { pagesWithinGoal: pageReads.every(([, v]) => v.p95 <= GOAL_MS) },
  }),
);
await store.close();
await pg?.stop();
rmSync(dir, { recursive: true, force: true });
