import type { MatrixCell, RefStatusResponse } from '@driftline/protocol';
import { parseCliDuration as parseDuration } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { age, buildReport, cellLink, reportMarkdown } from '../src/commands/refsReport.js';
import { sha } from './refSim.js';

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
