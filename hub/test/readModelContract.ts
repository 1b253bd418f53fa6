import { expect, it } from 'vitest';
import type { AgentRow, CellCount, CellRow, HubStore, RunRow } from '../src/ports/HubStore.js';
import { cell, run } from './storeFixtures.js';

/** A default cell of the contract's fleet: expected interval 60 s, so stale 120 s after its plan. */
const at = (site: string, environment: string, component: string, status: CellRow['status'], t = 1000) => ({
  ...cell(`R-${site}-${environment}-${component}-${t}`, t, status),
  site,
  environment,
  component,
});
const agent = (site: string): AgentRow => ({
  site,
  agent: 'a1',
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt: null,
  version: null,
  lastContactAt: null,
  queueDepth: null,
  oldestUnsentAt: null,
  clockOffsetMs: null,
  offsetSampledAt: null,
  upstream: null,
  cadenceS: {},
  contactIntervalS: null,
  contactWindows: [],
});
/** Counts as `key status[/kind][ stale] n` lines, for readable expectations. */
const lines = (cs: CellCount[]) =>
  cs.map((c) => `${c.key} ${c.status}${c.kind ? `/${c.kind}` : ''}${c.stale ? ' stale' : ''} ${c.n}`);
const keys = (cs: CellRow[]) => cs.map((c) => `${c.site}/${c.environment}/${c.component}`);

/** The fleet read model (docs/decisions/400-fleet-read-model.md), one suite for every HubStore adapter. */
export function runReadModelContract(withStore: (fn: (s: HubStore) => Promise<void>) => () => Promise<void>) {
  it(
    "keeps each agent's brief beside its row: its facts and declared cells per environment, no cadence",
    withStore(async (s) => {
      const big: AgentRow = {
        ...agent('b'),
        lastContactAt: 7,
        queueDepth: 3,
        contactWindows: ['0 */6 * * *'],
        cadenceS: { 'prod/dns': 60, 'prod/net': 60, 'dev/dns': 60, 'prod/dns@main': 60, bad: 60 },
        refs: { 'prod/dns': ['main'] },
        providers: ['registry.terraform.io/hashicorp/aws 5.0.0 linux_amd64'],
      };
      await s.commit({ agents: [agent('a'), big] });
      const briefs = await s.listAgentBriefs();
      expect(briefs.map((b) => `${b.site}/${b.agent}`)).toEqual(['a/a1', 'b/a1']);
      expect(briefs[1]?.declared).toEqual({ prod: 2, dev: 1 });
      expect(briefs[1]).toMatchObject({ lastContactAt: 7, queueDepth: 3, contactWindows: ['0 */6 * * *'] });
      for (const field of ['cadenceS', 'refs', 'providers']) expect(briefs[1]).not.toHaveProperty(field);
      // Rewritten with the row: a later contact moves the brief too.
      await s.commit({ agents: [{ ...big, lastContactAt: 9, cadenceS: { 'test/x': 60 } }] });
      const after = (await s.listAgentBriefs())[1];
      expect(after?.lastContactAt).toBe(9);
      expect(after?.declared).toEqual({ test: 1 });
    }),
  );
  it(
    'counts cells by site, environment, component and site/environment in the commit that writes them',
    withStore(async (s) => {
      await s.commit({
        cells: [
          at('a', 'prod', 'net', 'clean'),
          at('a', 'prod', 'dns', 'drift'),
          at('a', 'dev', 'net', 'failed'),
          at('b', 'prod', 'net', 'clean'),
          {
            ...at('b', 'prod', 'dns', 'changes'),
            counts: { add: 1, change: 0, destroy: 0, replace: 0, import: 0, drift: 2 },
          },
          // An `@ref` cell is a plan of another ref: never in the default cells' counts.
          { ...at('b', 'prod', 'net', 'drift'), atRef: 'pr/1', ref: 'pr/1' },
        ],
      });
      expect(lines(await s.cellCounts('site'))).toEqual([
        'a clean 1',
        'a drift/drift 1',
        'a failed/failed 1',
        'b changes/drift 1',
        'b clean 1',
      ]);
      expect(lines(await s.cellCounts('environment'))).toEqual([
        'dev failed/failed 1',
        'prod changes/drift 1',
        'prod clean 2',
        'prod drift/drift 1',
      ]);
      expect(lines(await s.cellCounts('siteEnvironment', ['a/dev', 'b/prod']))).toEqual([
        'a/dev failed/failed 1',
        'b/prod changes/drift 1',
        'b/prod clean 1',
      ]);
      // A cell that changes status moves from one count to the other; the same status again moves nothing.
      await s.commit({ cells: [at('a', 'prod', 'dns', 'clean', 2000)] });
      await s.commit({ cells: [at('a', 'prod', 'dns', 'clean', 3000)] });
      expect(lines(await s.cellCounts('component', ['dns']))).toEqual(['dns changes/drift 1', 'dns clean 1']);
      expect(lines(await s.cellCounts('site', ['a']))).toEqual(['a clean 2', 'a failed/failed 1']);
    }),
  );

  it(
    'marks stale only the cells whose deadline passed, a bounded step at a time, and a newer plan is fresh again',
    withStore(async (s) => {
      // Deadlines: plannedAt + 2 × 60 s.
      await s.commit({
        cells: [
          at('a', 'prod', 'net', 'clean', 1000),
          at('a', 'prod', 'dns', 'blocked', 2000),
          at('b', 'prod', 'net', 'drift', 3000),
          { ...at('b', 'prod', 'dns', 'clean', 1000), expectedIntervalS: null },
        ],
      });
      // Judged at a time by the deadline, before any sweep moved the flag.
      expect(keys(await s.pageCells({ stale: true, now: 122_500, limit: 10 }))).toEqual([
        'a/prod/dns',
        'a/prod/net',
      ]);
      expect(keys(await s.pageCells({ stale: false, now: 122_500, limit: 10 }))).toEqual([
        'b/prod/dns',
        'b/prod/net',
      ]);
      expect(await s.pageCells({ stale: true, limit: 10 })).toEqual([]);
      expect(await s.advanceStale(121_000, 10)).toEqual([]);
      expect(keys(await s.advanceStale(500_000, 2))).toEqual(['a/prod/net', 'a/prod/dns']);
      expect(keys(await s.advanceStale(500_000, 10))).toEqual(['b/prod/net']);
      expect(await s.advanceStale(500_000, 10)).toEqual([]);
      expect(lines(await s.cellCounts('site'))).toEqual([
        'a blocked/blocked stale 1',
        'a clean stale 1',
        'b clean 1',
        'b drift/drift stale 1',
      ]);
      expect(keys(await s.pageCells({ stale: true, limit: 10 }))).toEqual([
        'a/prod/dns',
        'a/prod/net',
        'b/prod/net',
      ]);
      // Stale outranks blocked and nothing, not drift: the stale attention list is a's two cells.
      expect(keys(await s.attentionCells({ kind: 'stale', limit: 10 }))).toEqual([
        'a/prod/net',
        'a/prod/dns',
      ]);
      // The same plan written again (a sweep's notification mark) stays stale; a newer plan is fresh.
      const a = (await s.getCell('a', 'prod', 'net')) as CellRow;
      await s.commit({ cells: [{ ...a, staleNotifiedFor: a.runId }] });
      await s.commit({ cells: [{ ...at('a', 'prod', 'dns', 'clean', 400_000), receivedAt: 500_000 }] });
      expect(lines(await s.cellCounts('site', ['a']))).toEqual(['a clean 1', 'a clean stale 1']);
      // A plan received already past its deadline is stale from the start.
      await s.commit({ cells: [{ ...at('c', 'prod', 'net', 'clean', 1000), receivedAt: 500_000 }] });
      expect(lines(await s.cellCounts('site', ['c']))).toEqual(['c clean stale 1']);
    }),
  );

  it(
    'pages cells by filter and cursor in key order, and lists attention longest-standing first',
    withStore(async (s) => {
      await s.commit({
        cells: [
          at('a', 'prod', 'net', 'drift', 5000),
          at('a', 'dev', 'net', 'drift', 4000),
          at('b', 'prod', 'net', 'failed', 3000),
          { ...at('b', 'prod', 'dns', 'failed', 6000), reason: 'stuck-lock' },
          at('c', 'prod', 'net', 'drift', 1000),
          at('c', 'prod', 'dns', 'clean', 1000),
        ],
      });
      const first = await s.pageCells({ status: 'drift', limit: 2 });
      expect(keys(first)).toEqual(['a/dev/net', 'a/prod/net']);
      const last = first.at(-1) as CellRow;
      expect(keys(await s.pageCells({ status: 'drift', after: last, limit: 2 }))).toEqual(['c/prod/net']);
      expect(keys(await s.pageCells({ environment: 'prod', sites: ['b', 'c'], limit: 10 }))).toEqual([
        'b/prod/dns',
        'b/prod/net',
        'c/prod/dns',
        'c/prod/net',
      ]);
      expect(keys(await s.pageCells({ site: 'c', component: 'dns', limit: 10 }))).toEqual(['c/prod/dns']);
      expect(keys(await s.attentionCells({ kind: 'drift', limit: 2 }))).toEqual(['c/prod/net', 'a/dev/net']);
      expect(keys(await s.attentionCells({ kind: 'failed', limit: 10 }))).toEqual(['b/prod/net']);
      expect(keys(await s.attentionCells({ kind: 'stuck-lock', limit: 10 }))).toEqual(['b/prod/dns']);
    }),
  );

  it(
    'totals each ref over default and @ref cells, newest plan first, and moves a cell whose ref changes',
    withStore(async (s) => {
      const of = (c: CellRow, ref: string | null, plannedAt: number, receivedAt = plannedAt) => ({
        ...c,
        ref,
        plannedAt,
        receivedAt,
      });
      await s.commit({
        cells: [
          of(at('a', 'prod', 'net', 'clean'), 'main', 1000, 1500),
          of(at('a', 'prod', 'dns', 'drift'), 'main', 3000, 3100),
          of(at('b', 'prod', 'net', 'clean'), null, 9000),
          of(at('b', 'prod', 'dns', 'blocked'), 'release/2', 2000),
          { ...of(at('b', 'prod', 'net', 'clean'), 'pr/1', 5000, 5200), atRef: 'pr/1' },
          { ...of(at('a', 'prod', 'net', 'failed'), 'pr/1', 4000, 6000), atRef: 'pr/1' },
        ],
      });
      const totals = async (limit = 10) =>
        (await s.refTotals(limit)).map((r) => `${r.ref} ${r.cells} ${r.plannedAt} ${r.receivedAt}`);
      expect(await totals()).toEqual(['pr/1 2 5000 6000', 'main 2 3000 3100', 'release/2 1 2000 2000']);
      expect(await totals(1)).toEqual(['pr/1 2 5000 6000']);
      // A component whose default ref changes: its cell leaves main's total for the new ref's.
      await s.commit({ cells: [of(at('a', 'prod', 'dns', 'clean'), 'release/2', 7000)] });
      expect(await totals()).toEqual(['release/2 2 7000 7000', 'pr/1 2 5000 6000', 'main 1 1000 1500']);
      // Ties on the newest plan go by ref.
      await s.commit({ cells: [of(at('c', 'prod', 'net', 'clean'), 'a-ref', 7000)] });
      expect((await totals(2))[0]).toBe('a-ref 1 7000 7000');
    }),
  );

  it(
    "lists a ref's default cells by site and cell, of one site, bounded, and follows a cell to its new ref",
    withStore(async (s) => {
      const of = (c: CellRow, ref: string | null) => ({ ...c, ref });
      await s.commit({
        cells: [
          of(at('b', 'prod', 'net', 'clean'), 'main'),
          of(at('a', 'prod', 'net', 'drift'), 'main'),
          of(at('a', 'dev', 'net', 'clean'), 'main'),
          of(at('a', 'prod', 'dns', 'blocked'), 'release/2'),
          of(at('c', 'prod', 'net', 'clean'), null),
          // An `@ref` cell of the ref is not a default cell of it.
          { ...of(at('c', 'prod', 'dns', 'clean'), 'main'), atRef: 'main' },
        ],
      });
      const ofRef = async (ref: string, site?: string, limit = 10) =>
        keys(await s.listCellsOfRef({ ref, ...(site ? { site } : {}), limit }));
      expect(await ofRef('main')).toEqual(['a/dev/net', 'a/prod/net', 'b/prod/net']);
      expect(await ofRef('main', 'b')).toEqual(['b/prod/net']);
      expect(await ofRef('main', 'c')).toEqual([]);
      expect(await ofRef('main', undefined, 2)).toEqual(['a/dev/net', 'a/prod/net']);
      expect(await ofRef('release/2')).toEqual(['a/prod/dns']);
      expect(await ofRef('pr/9')).toEqual([]);
      // After a key, in key order (a page of the ref's matrix, decision 650), of one site too.
      const after = async (a: [string, string, string], site?: string, limit = 10) =>
        keys(
          await s.listCellsOfRef({
            ref: 'main',
            ...(site ? { site } : {}),
            after: { site: a[0], environment: a[1], component: a[2] },
            limit,
          }),
        );
      expect(await after(['a', 'dev', 'net'])).toEqual(['a/prod/net', 'b/prod/net']);
      expect(await after(['a', 'dev', 'net'], undefined, 1)).toEqual(['a/prod/net']);
      expect(await after(['a', 'prod', 'net'])).toEqual(['b/prod/net']);
      expect(await after(['a', 'prod', 'nez'])).toEqual(['b/prod/net']);
      expect(await after(['a', 'dev', 'net'], 'a')).toEqual(['a/prod/net']);
      expect(await after(['a', 'zzz', 'x'], 'b')).toEqual(['b/prod/net']);
      expect(await after(['b', 'prod', 'net'], 'b')).toEqual([]);
      expect(await after(['c', '', ''], 'b')).toEqual([]);
      expect(await after(['b', 'prod', 'net'])).toEqual([]);
      // The whole row, as the cell was written.
      expect((await s.listCellsOfRef({ ref: 'release/2', limit: 1 }))[0]).toMatchObject({
        status: 'blocked',
        ref: 'release/2',
      });
      // A component whose default ref changes: its cell leaves main for the new ref.
      await s.commit({ cells: [of(at('a', 'prod', 'net', 'clean', 2000), 'release/2')] });
      expect(await ofRef('main')).toEqual(['a/dev/net', 'b/prod/net']);
      expect(await ofRef('release/2', 'a')).toEqual(['a/prod/dns', 'a/prod/net']);
      await s.commit({ cells: [of(at('b', 'prod', 'net', 'clean', 2000), null)] });
      expect(await ofRef('main')).toEqual(['a/dev/net']);
    }),
  );

  it(
    "counts a ref's default cells per status of their plan of a commit and lists those not complete (decision 615)",
    withStore(async (s) => {
      const of = (c: CellRow, commit: string) => ({ ...c, ref: 'main', commit });
      const ran = (
        site: string,
        component: string,
        runId: string,
        status: RunRow['status'],
        commit: string,
      ) => ({
        ...run(runId, 1500, status),
        site,
        component,
        ref: 'main',
        commit,
      });
      await s.commit({
        cells: [
          of(at('a', 'prod', 'net', 'clean'), 'c1'),
          of(at('a', 'prod', 'dns', 'blocked'), 'c1'),
          of(at('b', 'prod', 'net', 'failed'), 'c1'),
          // Moved on to c2: its plan of c1 is its newest run of it.
          of(at('b', 'prod', 'dns', 'clean', 2000), 'c2'),
          // Moved on, no run of c1: no plan of it.
          of(at('c', 'prod', 'net', 'drift', 2000), 'c2'),
          { ...at('c', 'prod', 'dns', 'clean'), ref: 'release/2', commit: 'c1' },
          // An `@ref` cell of the ref at a default cell's key: that cell is the gate's, not counted here.
          of(at('d', 'prod', 'net', 'clean'), 'c1'),
          { ...at('d', 'prod', 'net', 'failed'), ref: 'main', atRef: 'main', commit: 'c1' },
        ],
        runs: [
          ran('b', 'dns', '01JB0000000000000000000001', 'failed', 'c1'),
          ran('b', 'dns', '01JB0000000000000000000002', 'changes', 'c1'),
          ran('c', 'net', '01JC0000000000000000000001', 'clean', 'c0'),
        ],
      });
      const counts = async (commit: string) =>
        (await s.refGateCounts({ ref: 'main', commit })).map((c) => `${c.status} ${c.n}`).sort();
      expect(await counts('c1')).toEqual(['blocked 1', 'changes 1', 'clean 1', 'failed 1', 'null 1']);
      expect(await counts('c2')).toEqual(['clean 1', 'drift 1', 'null 3']);
      expect(await s.refGateCounts({ ref: 'pr/9', commit: 'c1' })).toEqual([]);
      const window = async (q: { commit: string; all?: boolean; limit?: number; after?: CellRow }) =>
        (await s.refGateCells({ ref: 'main', limit: 10, ...q })).map(
          (g) => `${g.cell.site}/${g.cell.component} ${g.run?.runId ?? '-'}`,
        );
      expect(await window({ commit: 'c1' })).toEqual(['a/dns -', 'b/net -', 'c/net -']);
      expect(await window({ commit: 'c1', all: true })).toEqual([
        'a/dns -',
        'a/net -',
        'b/dns 01JB0000000000000000000002',
        'b/net -',
        'c/net -',
      ]);
      expect(await window({ commit: 'c1', limit: 2 })).toEqual(['a/dns -', 'b/net -']);
      const after = (await s.getCell('b', 'prod', 'net')) as CellRow;
      expect(await window({ commit: 'c1', after })).toEqual(['c/net -']);
      expect(await window({ commit: 'c2' })).toEqual(['a/dns -', 'a/net -', 'b/net -']);
      // A cell's new plan moves it between the counts.
      await s.commit({ cells: [of(at('a', 'prod', 'dns', 'clean', 3000), 'c1')] });
      expect(await counts('c1')).toEqual(['changes 1', 'clean 2', 'failed 1', 'null 1']);
    }),
  );

  it(
    'pages sites, enrolled-only ones included, by name, last contact or problems, with the total',
    withStore(async (s) => {
      await s.commit({
        sites: [
          { site: 'a', lastContactAt: 300, upstream: null, unreachableNotifiedFor: null },
          { site: 'b', lastContactAt: 100, upstream: null, unreachableNotifiedFor: null },
          { site: 'c', lastContactAt: 200, upstream: null, unreachableNotifiedFor: null },
        ],
        agents: [agent('d'), agent('a')],
        cells: [
          at('b', 'prod', 'net', 'failed'),
          at('b', 'prod', 'dns', 'drift'),
          at('c', 'prod', 'x', 'drift'),
        ],
      });
      expect(await s.pageSites({ sort: 'site', offset: 0, limit: 3 })).toEqual({
        sites: ['a', 'b', 'c'],
        total: 4,
      });
      expect((await s.pageSites({ sort: 'site', offset: 3, limit: 3 })).sites).toEqual(['d']);
      expect((await s.pageSites({ sort: '-site', offset: 0, limit: 2 })).sites).toEqual(['d', 'c']);
      expect((await s.pageSites({ sort: 'lastContact', offset: 0, limit: 10 })).sites).toEqual([
        'b',
        'c',
        'a',
        'd',
      ]);
      expect((await s.pageSites({ sort: '-lastContact', offset: 0, limit: 10 })).sites).toEqual([
        'a',
        'c',
        'b',
        'd',
      ]);
      expect((await s.pageSites({ sort: 'problems', offset: 0, limit: 2 })).sites).toEqual(['b', 'c']);
      expect(await s.pageSites({ sort: 'site', offset: 0, limit: 10, contains: 'b' })).toEqual({
        sites: ['b'],
        total: 1,
      });
    }),
  );

  it(
    'prunes runs across many cells (more than one bounded step) and keeps the run each cell shows',
    withStore(async (s) => {
      const runsOf = (i: number) =>
        [1, 2, 3].map((k) => ({
          ...run(`01J${String(i).padStart(4, '0')}${k}`.padEnd(26, '0'), 1000 + k),
          component: `c${String(i).padStart(4, '0')}`,
        }));
      const runs = Array.from({ length: 450 }, (_, i) => runsOf(i)).flat();
      // Each cell shows its oldest run: kept though beyond the newest one.
      const cells = Array.from({ length: 450 }, (_, i) => ({
        ...cell((runsOf(i)[0] as RunRow).runId, 1001),
        component: `c${String(i).padStart(4, '0')}`,
      }));
      await s.commit({ runs, cells });
      const r = await s.prune({ maxRunsPerCell: 1, maxAgeMs: 1e12, failureMaxAgeMs: 1e12 }, 10_000);
      expect(r.runs).toBe(450);
      const left = await s.listRuns({ site: 'ship-7', environment: 'prod', component: 'c0449', limit: 10 });
      expect(left.map((x) => x.runId).sort()).toEqual(
        [(runsOf(449)[0] as RunRow).runId, (runsOf(449)[2] as RunRow).runId].sort(),
      );
    }),
  );
}
