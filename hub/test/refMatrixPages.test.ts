import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MatrixQuery } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../src/adapters/memory/MemoryHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { decodeCellCursor, encodeCellCursor } from '../src/core/fleet/MatrixWindow.js';
import { pageWhole } from '../src/core/fleet/pageWhole.js';
import { waivedKey } from '../src/core/fleet/waivedDrift.js';
import { Queries } from '../src/core/Queries.js';
import type { AgentRow, CellRow, HubStore } from '../src/ports/HubStore.js';

const NOW = 10_000_000;
const agent = (site: string, refs: Record<string, string[]>, revokedAt: number | null = null): AgentRow => ({
  site,
  agent: 'a1',
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt,
  version: null,
  lastContactAt: NOW,
  queueDepth: null,
  oldestUnsentAt: null,
  clockOffsetMs: null,
  offsetSampledAt: null,
  upstream: null,
  cadenceS: Object.fromEntries(Object.keys(refs).map((k) => [k, 3600])),
  contactIntervalS: 3600,
  contactWindows: [],
  refs,
});
let run = 0;
const cell = (
  site: string,
  key: string,
  ref: string | null,
  status: CellRow['status'] = 'clean',
  atRef?: string,
): CellRow => {
  const [environment, component] = key.split('/') as [string, string];
  return {
    site,
    environment,
    component,
    agent: 'a1',
    status,
    counts: { add: 0, change: 1, destroy: 0, replace: 0, import: 0, drift: 0 },
    reason: null,
    runId: `01JA${String(run++).padStart(22, '0')}`,
    // Every third cell is stale.
    plannedAt: run % 3 === 0 ? NOW - 10 * 3600_000 : NOW - 1000,
    receivedAt: NOW - 500,
    expectedIntervalS: 3600,
    planHash: null,
    staleNotifiedFor: null,
    ref,
    commit: 'c'.repeat(40),
    ...(atRef ? { atRef } : {}),
  };
};
const keysOf = (n: number) => Array.from({ length: n }, (_, j) => `${j % 2 ? 'prod' : 'dev'}/c${j}`);
const all = (n: number, patterns: string[]) => Object.fromEntries(keysOf(n).map((k) => [k, patterns]));

/**
 * A fleet where paging by ranges could differ from the matrix computed whole: sites that sort apart in
 * code units and by locale (`s0`, `s_1`), two cells at one key (a default cell and an `@ref` cell of
 * the ref), `@ref` cells with no default cell, a site with agents and no cells (all no-data), a site
 * with cells and no agent, a revoked agent, and cells of other refs.
 */
async function fill(store: HubStore) {
  const sites = ['a', 'b', 'c', 's0', 's_1', 's_2'];
  await store.commit({
    agents: [
      ...sites.map((s) => agent(s, all(6, ['main', 'pr/*']))),
      agent('e', all(7, ['main', 'pr/*'])),
      agent('g', all(3, ['main']), 5),
      agent('h', { 'prod/c1': ['pr/*'], 'dev/c0': ['release'] }),
    ],
    sites: ['a', 'b', 'e', 'f'].map((s) => ({
      site: s,
      lastContactAt: s === 'b' ? NOW - 100 * 3600_000 : NOW,
      upstream: null,
      unreachableNotifiedFor: null,
    })),
  });
  await store.commit({
    cells: [
      ...sites.flatMap((s) =>
        keysOf(5).map((k, j) =>
          cell(s, k, j === 3 ? 'release' : 'main', (['clean', 'changes', 'failed', 'drift'] as const)[j % 4]),
        ),
      ),
      cell('f', 'prod/c1', 'main'),
      cell('f', 'prod/c9', 'main', 'blocked'),
      cell('h', 'prod/c1', 'main'),
      cell('a', 'dev/c0', 'main', 'changes', 'main'),
      cell('c', 'prod/c5', 'main', 'clean', 'main'),
      cell('s_1', 'dev/c2', 'pr/1', 'changes', 'pr/1'),
      cell('h', 'prod/c1', 'pr/1', 'failed', 'pr/1'),
      cell('b', 'prod/c3', 'pr/1', 'clean', 'pr/1'),
    ],
  });
}

/** Every page as `/api/matrix?ref=` answered before: the matrix computed whole, then paged. */
async function wholePages(queries: Queries, q: Omit<MatrixQuery, 'at'>, limit: number) {
  const whole = await queries.matrix(q, NOW);
  const sites = q.sites ? new Set<string>(q.sites) : null;
  const pages: unknown[] = [];
  let cursor: string | undefined;
  do {
    const { cells, last } = pageWhole(
      sites ? whole.filter((c) => sites.has(c.site)) : whole,
      decodeCellCursor(cursor),
      limit,
    );
    pages.push(cells);
    cursor = last ? encodeCellCursor(last) : undefined;
  } while (cursor);
  return pages;
}
async function rangePages(queries: Queries, q: Omit<MatrixQuery, 'at'> & { ref: string }, limit: number) {
  const pages: unknown[] = [];
  let cursor: string | undefined;
  do {
    const { cells, next } = await queries.refPages.page({ ...q, limit, ...(cursor ? { cursor } : {}) }, NOW);
    pages.push(cells);
    cursor = next ?? undefined;
  } while (cursor);
  return pages;
}

const dir = mkdtempSync(join(tmpdir(), 'ref-pages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: [string, () => HubStore][] = [
  ['memory', () => new MemoryHubStore()],
  ['sqlite', () => new SqliteHubStore(join(dir, `hub-${run}.db`))],
];

describe.each(stores)('pages of a ref matrix by ranges of the ref index (%s)', (_, make) => {
  it('answers every page as the matrix computed whole did, at any page size and filter', async () => {
    const store = make();
    await fill(store);
    const queries = new Queries(store, 3600);
    queries.waivedCells = async () =>
      new Set([waivedKey({ site: 'a', environment: 'prod', component: 'c3' })]);
    const filters: Omit<MatrixQuery, 'at' | 'ref'>[] = [
      {},
      { site: 'a' },
      { site: 'e' },
      { site: 'f' },
      { site: 'z' },
      { status: 'no-data' },
      { status: 'failed' },
      { environment: 'prod' },
      { component: 'c1' },
      { stale: true },
      { sites: ['b', 'e', 's_1'] as MatrixQuery['sites'] },
    ];
    let compared = 0;
    for (const ref of ['main', 'pr/1', 'release', 'pr/404', 'nothing'])
      for (const f of filters)
        for (const limit of [1, 2, 3, 5, 7, 5000]) {
          const q = { ...f, ref };
          const want = await wholePages(queries, q, limit);
          expect(await rangePages(queries, q, limit), `${JSON.stringify(q)} limit ${limit}`).toEqual(want);
          compared += want.length;
        }
    expect(compared).toBeGreaterThan(1000);
    // The fleet's shapes are there: two cells at one key, no-data of a site without cells, one judged unreachable.
    const main = (await rangePages(queries, { ref: 'main' }, 5000))[0] as {
      site: string;
      component: string;
      status: string;
      siteUnreachable: boolean;
      driftWaived?: boolean;
    }[];
    expect(main.filter((c) => c.site === 'a' && c.component === 'c0').map((c) => c.status)).toEqual([
      'clean',
      'changes',
    ]);
    expect(main.filter((c) => c.site === 'e').every((c) => c.status === 'no-data')).toBe(true);
    expect(main.some((c) => c.site === 'b' && c.siteUnreachable)).toBe(true);
    expect(main.some((c) => c.driftWaived)).toBe(true);
    expect(main.some((c) => c.site === 'g')).toBe(false);
  });
});
