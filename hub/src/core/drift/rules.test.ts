import type { PlanSummary } from '@driftline/protocol';
import { globMatch } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { type EpisodeRow, observeRun } from './episodes.js';
import { driftSignature, failureSignature, generaliseAddress } from './signature.js';
import { covers, type WaiverRow } from './waivers.js';

const summary = (o: Partial<PlanSummary>): PlanSummary => ({
  component: 'net',
  environment: 'prod',
  status: 'drift',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:01.000Z',
  ...o,
});
const run = (runId: string, plannedAt: number, s: Partial<PlanSummary>) => ({
  runId,
  site: 'ship-7',
  environment: 'prod',
  component: 'net',
  plannedAt,
  summary: summary(s),
});
const drifted = (address: string, attributes = ['tags']) => ({ address, type: 'aws_s3_bucket', attributes });

describe('signatures', () => {
  it('generalise instance keys and indices, quotes and brackets inside keys included', () => {
    expect(generaliseAddress('module.net["eu-1"].aws_subnet.a[3]')).toBe('module.net[*].aws_subnet.a[*]');
    expect(generaliseAddress('aws_x.y["a]\\"b"]')).toBe('aws_x.y[*]');
    expect(driftSignature('aws_s3_bucket', 'aws_s3_bucket.b["x"]', ['tags', 'acl'])).toBe(
      'drift aws_s3_bucket aws_s3_bucket.b[*] {acl,tags}',
    );
    expect(failureSignature('exit-1', 'Error: Invalid count "12" at line 4\nmore')).toBe(
      'failure exit-1 Error: Invalid count "…" at line N',
    );
  });
});

describe('observeRun', () => {
  it('opens on the first plan that sees an address, extends it, and resolves it on the first that does not', () => {
    const a = observeRun([], run('r1', 1000, { drifted: [drifted('aws_s3_bucket.b')] }));
    expect(a.opened.map((e) => e.address)).toEqual(['aws_s3_bucket.b']);
    const open = a.write as EpisodeRow[];
    const b = observeRun(open, run('r2', 2000, { drifted: [drifted('aws_s3_bucket.b', ['acl'])] }));
    expect(b.opened).toEqual([]);
    expect(b.write[0]).toMatchObject({ firstSeen: 1000, lastSeen: 2000, attributes: ['acl', 'tags'] });
    // A locked plan says nothing: the episode stays open.
    expect(observeRun(b.write, run('r3', 3000, { status: 'locked' })).write).toEqual([]);
    const c = observeRun(b.write, run('r4', 4000, { status: 'clean' }));
    expect(c.resolved).toMatchObject([
      { state: 'resolved', resolvedAt: 4000, firstRunId: 'r1', lastRunId: 'r2' },
    ]);
  });

  it('keeps failures and failing checks as their own episodes', () => {
    const f = observeRun(
      [],
      run('r1', 1, { status: 'failed', reason: 'exit-1', errorExcerpt: 'Error: x 1' }),
    );
    expect(f.opened).toMatchObject([{ kind: 'failure', type: 'exit-1', detail: 'Error: x N' }]);
    const c = observeRun(
      f.write,
      run('r2', 2, {
        status: 'clean',
        checks: { pass: 0, fail: 1, unknown: 0, items: [{ address: 'check.h', status: 'fail' }] },
      }),
    );
    expect(c.resolved.map((e) => e.kind)).toEqual(['failure']);
    expect(c.opened.map((e) => `${e.kind} ${e.address}`)).toEqual(['check check.h']);
  });
});

describe('waivers', () => {
  const w: WaiverRow = {
    id: 'w-1',
    pattern: 'drift aws_s3_bucket *',
    attributes: ['tags'],
    sites: ['ship-*'],
    environments: [],
    components: [],
    expiresAt: 10_000,
    reason: 'r',
    author: 'ada',
    createdAt: 0,
    removedAt: null,
    removedBy: null,
  };
  const ep = observeRun([], run('r1', 1, { drifted: [drifted('aws_s3_bucket.b')] })).opened[0] as EpisodeRow;

  it('match by signature or address with * in linear time, within scope and attributes, until expiry', () => {
    expect(globMatch('a*c*e', 'abcde')).toBe(true);
    expect(globMatch('a*c', 'ab')).toBe(false);
    expect(globMatch(`${'*'.repeat(50)}x`, 'y'.repeat(100_000))).toBe(false);
    expect(covers(w, ep, 5)).toBe(true);
    expect(covers({ ...w, pattern: 'aws_s3_bucket.*' }, ep, 5)).toBe(true);
    expect(covers(w, ep, 10_000)).toBe(false);
    expect(covers({ ...w, removedAt: 3 }, ep, 5)).toBe(false);
    expect(covers({ ...w, sites: ['polar-*'] }, ep, 5)).toBe(false);
    expect(covers({ ...w, attributes: ['acl'] }, ep, 5)).toBe(false);
  });
});
