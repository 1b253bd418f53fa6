import type { MatrixCell, RefStatusResponse } from '@driftline/protocol';
import {
  MATRIX_PAGE_MAX,
  MatrixResponseSchema,
  parseCliDuration as parseDuration,
  RefStatusResponseSchema,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { readRefMatrix } from '../src/commands/refsMatrix.js';
import { age, buildReport, cellLink, reportMarkdown } from '../src/commands/refsReport.js';
import { MAX_GATE_CELLS } from '../src/core/RefQueries.js';
import type { CellRow, RunRow } from '../src/ports/HubStore.js';
import { startHub, type TestHub } from './hubFixture.js';
import { sha } from './refSim.js';
import { run } from './storeFixtures.js';
import { addTestUser } from './users.js';

const cell = (over: Partial<MatrixCell>): MatrixCell => ({
  site: 'ship-8' as MatrixCell['site'],
  environment: 'prod',
  component: 'app',
  status: 'changes',
  counts: { add: 1, change: 0, destroy: 2, replace: 0, import: 0, drift: 0 },
  plannedAt: '2025-06-01T10:00:00.000Z',
  receivedAt: '2025-06-01T10:00:01.000Z',
  runId: null,
  expectedIntervalS: null,
  stale: false,
  siteUnreachable: false,
  reason: null,
  ref: 'pr/42',
  commit: sha('2'),
  ...over,
});

describe('hub refs helpers', () => {
  it('reads durations as 2h, 30m, 90s or plain seconds, and nothing else', () => {
    expect([parseDuration('2h'), parseDuration('30m'), parseDuration('90s'), parseDuration('600')]).toEqual([
      7_200_000, 1_800_000, 90_000, 600_000,
    ]);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect([parseDuration('2d'), parseDuration('1h30m')]).toEqual([172_800_000, 5_400_000]);
    for (const bad of ['soon', '', '-5', 'h', '5x', '0']) expect(parseDuration(bad), bad).toBeNull();
  });

  it('tells ages in the largest unit that fits', () => {
    const now = '2025-06-02T12:00:00.000Z';
    expect(age('2025-06-02T11:59:30.000Z', now)).toBe('30 s ago');
    expect(age('2025-06-02T11:10:00.000Z', now)).toBe('50 min ago');
    expect(age('2025-06-02T07:00:00.000Z', now)).toBe('5 h ago');
    expect(age('2025-05-30T12:00:00.000Z', now)).toBe('3 d ago');
    expect(age(null, now)).toBe('—');
  });

  it("links a cell's view of the ref on the dashboard", () => {
    expect(
      cellLink('https://hub.example', 'pr/42', { site: 'ship-8', environment: 'prod', component: 'app' }),
    ).toBe('https://hub.example/?view=cell&site=ship-8&env=prod&comp=app&ref=pr%2F42');
  });

  it('counts cells of other commits as pending, and escapes what the sites wrote', () => {
    const gate: RefStatusResponse = {
      ref: 'pr/42',
      commit: sha('3'),
      state: 'failed',
      counts: { complete: 0, pending: 1, blocked: 0, failed: 1, total: 2 },
      cells: [
        {
          site: 'ship-8' as MatrixCell['site'],
          environment: 'prod',
          component: 'app',
          state: 'pending',
          planStatus: null,
          counts: null,
          commit: sha('2'),
          plannedAt: null,
          receivedAt: null,
          runId: null,
          reason: null,
          needs: [],
        },
        {
          site: 'ship-9' as MatrixCell['site'],
          environment: 'prod',
          component: 'db',
          state: 'failed',
          planStatus: 'failed',
          counts: null,
          commit: sha('3'),
          plannedAt: '2025-06-01T11:00:00.000Z',
          receivedAt: null,
          runId: null,
          reason: 'exit-1 | <script>',
          needs: [],
        },
      ],
    };
    const matrix = {
      cells: [
        cell({}),
        cell({ site: 'ship-9' as MatrixCell['site'], component: 'db', status: 'failed', commit: sha('3') }),
      ],
      asOf: '2025-06-01T12:00:00.000Z',
    };
    const r = buildReport('https://hub.example', 'pr/42', sha('3'), matrix, gate);
    expect(r.groups.pending.map((c) => [c.site, c.commit])).toEqual([['ship-8', sha('2')]]);
    expect(r.groups.changes).toEqual([]);
    const text = reportMarkdown(r);
    expect(text).toContain('**Gate: failed**');
    expect(text).toContain('| latest plan is of 222222222222 |');
    expect(text).toContain('exit-1 \\| \\<script\\>');
    expect(text).toContain('| 60 min ago |');
  });
  it('says a blocked cell whose need is on its way is pending, naming the need and the publication', () => {
    const aws = 'registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64';
    const gate: RefStatusResponse = {
      ref: 'pr/42',
      commit: sha('3'),
      state: 'pending',
      counts: { complete: 0, pending: 1, blocked: 0, failed: 0, total: 1 },
      cells: [
        {
          site: 'ship-8' as MatrixCell['site'],
          environment: 'prod',
          component: 'app',
          state: 'pending',
          planStatus: 'blocked',
          counts: null,
          commit: sha('3'),
          plannedAt: '2025-06-01T11:00:00.000Z',
          receivedAt: null,
          runId: null,
          reason: null,
          needs: [aws],
          onTheWay: ['01PUB'],
        },
      ],
    };
    const matrix = {
      cells: [cell({ status: 'blocked', commit: sha('3') })],
      asOf: '2025-06-01T12:00:00.000Z',
    };
    const r = buildReport('https://hub.example', 'pr/42', sha('3'), matrix, gate);
    expect(r.groups.blocked).toEqual([]);
    expect(r.groups.pending.map((c) => [c.site, c.onTheWay])).toEqual([['ship-8', ['01PUB']]]);
    expect(reportMarkdown(r)).toContain(`blocked until \`${aws}\` arrives: publication 01PUB is on its way`);
  });
});

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

describe('hub refs report of a ref larger than the gate lists (decision 615)', { timeout: 60_000 }, () => {
  it('reports complete cells past MAX_GATE_CELLS as their plans, never as no-data, and tallies the cells it cannot list', async () => {
    const h = await startHub();
    hubs.push(h);
    const viewer = await addTestUser(h.hub.store, 'ci', ['viewer']);
    const n = MAX_GATE_CELLS + 5;
    const site = (i: number) => `s-${String(i).padStart(4, '0')}`;
    // s-0003 failed, s-0005 blocked, s-0007 of an older commit (pending), s-0009 moved on to sha('2')
    // after a plan of sha('1') that drifted (complete, but not the cell's latest plan): the rest changes.
    const status = (i: number): CellRow['status'] =>
      i === 3 ? 'failed' : i === 5 ? 'blocked' : i === 9 ? 'clean' : 'changes';
    const commitOf = (i: number) => (i === 7 ? sha('0') : i === 9 ? sha('2') : sha('1'));
    const cells: CellRow[] = Array.from({ length: n }, (_, i) => ({
      site: site(i),
      environment: 'prod',
      component: 'app',
      agent: 'a1',
      status: status(i),
      counts: { add: 1, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 },
      reason: null,
      runId: `01JA${String(i).padStart(22, '0')}`,
      plannedAt: 1000,
      receivedAt: 1000,
      expectedIntervalS: 60,
      planHash: null,
      staleNotifiedFor: null,
      ref: 'main',
      commit: commitOf(i),
    }));
    const drifted: RunRow = {
      ...run('01JB0000000000000000000009', 900, 'drift'),
      site: site(9),
      component: 'app',
      ref: 'main',
      commit: sha('1'),
    };
    await h.hub.store.commit({ cells, runs: [drifted] });
    const get = async <T>(path: string, schema: { parse: (x: unknown) => T }) => {
      const res = await fetch(`${h.url}${path}`, { headers: { authorization: viewer.authorization } });
      expect(res.status, `${path}: ${h.logs.slice(-3).join('')}`).toBe(200);
      return schema.parse(await res.json());
    };
    const matrix = await get('/api/matrix?ref=main', MatrixResponseSchema);
    const report = async (commit: string) => {
      const gate = await get(`/api/refs/main/status?commit=${commit}`, RefStatusResponseSchema);
      return buildReport('https://hub.example', 'main', commit, matrix, gate);
    };
    const sites = (cs: { site: string }[]) => cs.map((c) => c.site);

    // The gate lists only the cells not complete: the complete ones are reported from their plans.
    const r = await report(sha('1'));
    expect(r.gate?.counts).toEqual({ complete: n - 3, pending: 1, blocked: 1, failed: 1, total: n });
    expect(sites(r.groups.failed)).toEqual([site(3)]);
    expect(sites(r.groups.blocked)).toEqual([site(5)]);
    expect(sites(r.groups.pending)).toEqual([site(7)]);
    expect(r.groups.changes).toHaveLength(n - 4);
    expect(r.groups.changes[0]).toMatchObject({
      status: 'changes',
      commit: sha('1'),
      counts: cells[0]?.counts,
    });
    // The cell that moved on: complete by the gate's counts, its plan of the commit not in the answer.
    expect(sites([...r.groups.clean, ...r.groups.drift])).toEqual([]);
    expect(r.unlisted).toEqual({ complete: 1, notComplete: 0 });
    const text = reportMarkdown(r);
    expect(text).toContain(
      `**Gate: failed** — ${n - 3} complete, 1 pending, 1 blocked, 1 failed of ${n} cell(s)`,
    );
    expect(text).toContain('1 more cell(s) not listed: 1 complete, 0 not complete');

    // A new commit: every cell pending but one; the gate lists the first MAX_GATE_CELLS of them.
    const next = await report(sha('2'));
    expect(next.gate?.counts).toEqual({ complete: 1, pending: n - 1, blocked: 0, failed: 0, total: n });
    expect(sites(next.groups.clean)).toEqual([site(9)]);
    expect(next.groups.pending).toHaveLength(MAX_GATE_CELLS);
    expect(next.unlisted).toEqual({ complete: 0, notComplete: n - 1 - MAX_GATE_CELLS });
    // A small ref's report lists every cell and tallies nothing.
    const small = buildReport('https://hub.example', 'main', null, matrix, null);
    expect(small.unlisted).toBeNull();
  });
});

describe('hub refs report of a ref past one matrix page (decision 640)', { timeout: 120_000 }, () => {
  it('reads every page of the ref matrix, each cell once, and says when it was cut', async () => {
    const h = await startHub();
    hubs.push(h);
    const viewer = await addTestUser(h.hub.store, 'ci', ['viewer']);
    const n = MATRIX_PAGE_MAX + 7;
    const of = (site: string, i: number, atRef?: string): CellRow => ({
      site,
      environment: 'prod',
      component: 'app',
      agent: 'a1',
      status: 'changes',
      counts: { add: 1, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 },
      reason: null,
      runId: `01JA${String(i).padStart(22, '0')}`,
      plannedAt: 1000,
      receivedAt: 1000,
      expectedIntervalS: 60,
      planHash: null,
      staleNotifiedFor: null,
      ref: 'main',
      commit: sha('1'),
      ...(atRef ? { atRef } : {}),
    });
    const site = (i: number) => `s_${String(i).padStart(4, '0')}`;
    // `s0` comes first in code units but last by locale ('_' before digits), and an `@ref` cell of main
    // shares the key of the first page's last cell: either lost a cell at the page's end before.
    const cells = [
      ...Array.from({ length: n }, (_, i) => of(site(i), i)),
      of('s0', n),
      of(site(4998), n + 1, 'main'),
    ];
    await h.hub.store.commit({ cells });
    const get = async (path: string) => {
      const res = await fetch(`${h.url}${path}`, { headers: { authorization: viewer.authorization } });
      expect(res.status, `${path}: ${h.logs.slice(-3).join('')}`).toBe(200);
      return MatrixResponseSchema.parse(await res.json());
    };
    // One read (the report before) sees only the first page.
    const first = await get('/api/matrix?ref=main');
    expect([first.cells.length < cells.length, typeof first.next]).toEqual([true, 'string']);

    const matrix = await readRefMatrix(get, 'main');
    expect(matrix.cut).toBeNull();
    const id = (c: { site: string; environment: string; component: string; atRef?: string | null }) =>
      `${c.site}/${c.environment}/${c.component}`;
    expect(matrix.cells.map(id).sort()).toEqual(cells.map(id).sort());
    const report = buildReport('https://hub.example', 'main', null, matrix, null);
    expect(report.groups.changes).toHaveLength(cells.length);
    expect(reportMarkdown(report)).toContain(`#### Changes (${cells.length})`);
    expect(reportMarkdown(report)).not.toContain('**Cut:**');

    // Bounded: past its cap the report says it was cut and where to read the rest.
    const cut = await readRefMatrix(get, 'main', 10);
    expect([cut.cells.length, cut.cut?.cells]).toEqual([10, 10]);
    const text = reportMarkdown(buildReport('https://hub.example', 'main', null, cut, null));
    expect(text).toContain(
      "**Cut:** the ref's matrix has more than 10 cells; this report lists the first 10 (by site and cell).",
    );
    expect(text).toContain('`/api/matrix?ref=main&site=<site>`');
  });
});
