import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signApproval } from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliGitMirror } from '../src/adapters/git/CliGitMirror.js';
import {
  type ApplyHarness,
  approve,
  claimsFor,
  doc,
  git,
  handled,
  planNow,
  scenario,
  serial,
  settles,
  startApplyAgent,
} from './helpers/applyAgent.js';

let h: ApplyHarness;
beforeAll(async () => {
  h = await startApplyAgent([
    { name: 'net', scenario: scenario('changes'), apply: '{ approvers: ["{A}"] }' },
    { name: 'rep', scenario: scenario('changes'), apply: '{ approvers: ["{A}"] }' },
    { name: 'db', scenario: scenario('changes'), apply: '{ approvers: ["{A}", "{B}"], quorum: 2 }' },
    {
      name: 'cache',
      scenario: scenario('changes', '{ state: changes, variant: 1 }'),
      apply: '{ approvers: ["{A}"] }',
    },
    { name: 'queue', scenario: scenario('apply-error'), apply: '{ approvers: ["{A}"] }' },
    { name: 'stale', scenario: scenario('changes'), apply: '{ approvers: ["{A}"] }' },
    { name: 'edge', scenario: scenario('changes'), apply: '{ approvers: ["{A}"] }', source: true },
    { name: 'dns', scenario: scenario('changes') },
  ]);
}, 120_000);
afterAll(() => h?.close());

const planFile = (runId: string) => join(h.dir, 'data', 'plans', `${runId}.tfplan`);

describe('approve at headquarters, apply at the outpost', () => {
  it('keeps the saved plan of an apply-enabled cell (0600, never sent), applies it on an approval, then plans again', {
    timeout: 120_000,
  }, async () => {
    const runId = await planNow(h, 'net');
    const run = doc(h).runs[runId];
    expect(run?.summary.status).toBe('changes');
    const path = planFile(runId);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(h.dir, 'data', 'plans')).mode & 0o777).toBe(0o700);
    expect(run?.summary.planFileSha256).toBe(createHash('sha256').update(readFileSync(path)).digest('hex'));

    await approve(h, claimsFor(h, runId));
    const a = await settles(h, runId, (x) => x.state === 'applied' && x.nextRunId !== undefined);
    expect(a).toMatchObject({ environment: 'prod', component: 'net', ref: 'main', quorum: 1 });
    expect(a.approvers).toEqual([h.keyA]);
    expect(a.startedAt).toBeLessThanOrEqual(a.finishedAt ?? 0);
    expect(serial(h, 'net')).toBe(1);
    // The document carries the apply run to the hub, and the plan after it shows the result.
    const d = doc(h);
    expect(d.applies?.[runId]?.state).toBe('applied');
    expect(d.runs[a.nextRunId as string]?.summary.status).toBe('clean');
    expect(d.cells['prod/net']?.runId).toBe(a.nextRunId);
    // A saved plan applies once: its file is gone.
    expect(existsSync(path)).toBe(false);
  });

  it('keeps no plan file for a cell without apply, and reports no planFileSha256 for it', {
    timeout: 60_000,
  }, async () => {
    const runId = await planNow(h, 'dns');
    expect(doc(h).runs[runId]?.summary.planFileSha256).toBeUndefined();
    expect(existsSync(planFile(runId))).toBe(false);
  });

  it('applies a source component in the same commit checked out again, with the offline init', {
    timeout: 120_000,
  }, async () => {
    const runId = await planNow(h, 'edge');
    expect(doc(h).runs[runId]?.summary.git?.commit).toBe(h.edgeCommit);
    await approve(h, claimsFor(h, runId, { commit: h.edgeCommit as never }));
    const a = await settles(h, runId, (x) => x.state === 'applied' && x.nextRunId !== undefined);
    expect(serial(h, 'edge', true)).toBe(1);
    expect(doc(h).runs[a.nextRunId as string]?.summary.status).toBe('clean');
  });

  it("makes a plan at a newer commit a run of its own, even when it plans the same (the run names its plan file's commit)", {
    timeout: 120_000,
  }, async () => {
    const before = await planNow(h, 'edge');
    const shown = doc(h).cells['prod/edge']?.runId as string;
    expect(shown <= before).toBe(true);
    const src = join(h.dir, 'src');
    writeFileSync(join(src, 'README.md'), 'a change that plans the same\n');
    git(src, 'add', '.');
    git(src, 'commit', '-qm', 'readme');
    const commit = git(src, 'rev-parse', 'HEAD');
    git(src, 'bundle', 'create', join(h.dir, 'infra-2.bundle'), 'main');
    await new CliGitMirror(join(h.dir, 'data', 'git')).apply('infra', join(h.dir, 'infra-2.bundle'));
    const runId = await planNow(h, 'edge');
    const run = doc(h).runs[runId];
    expect(run?.summary.git?.commit).toBe(commit);
    expect(run?.summary.status).toBe(doc(h).runs[shown]?.summary.status);
    expect(doc(h).cells['prod/edge']).toMatchObject({ runId, commit });
    expect(existsSync(planFile(runId))).toBe(true);
  });

  it('counts distinct pinned approvers: below quorum it waits, the second approver applies it', {
    timeout: 120_000,
  }, async () => {
    const runId = await planNow(h, 'db');
    await approve(h, claimsFor(h, runId), h.approverA);
    let a = await settles(h, runId, (x) => x.state === 'waiting-quorum');
    expect(a.approvers).toEqual([h.keyA]);
    // The same approver again (another approval) is still one approver.
    await approve(h, claimsFor(h, runId), h.approverA);
    a = await settles(h, runId, (x) => x.approvalIds.length === 2);
    expect(a.state).toBe('waiting-quorum');
    expect(a.approvers).toEqual([h.keyA]);
    expect(serial(h, 'db')).toBe(0);
    await approve(h, claimsFor(h, runId), h.approverB);
    a = await settles(h, runId, (x) => x.state === 'applied');
    expect(a.approvers.sort()).toEqual([h.keyA, h.keyB].sort());
    expect(serial(h, 'db')).toBe(1);
  });

  it('applies a replayed approval once: the same approval twice, and again after the apply', {
    timeout: 120_000,
  }, async () => {
    const runId = await planNow(h, 'rep');
    const signed = await signApproval(claimsFor(h, runId), h.approverA.privateKey, h.approverA.publicKey);
    await h.hub.queueApproval(signed);
    await h.hub.queueApproval(signed);
    h.agent.loop.kick();
    const a = await settles(h, runId, (x) => x.state === 'applied' && x.nextRunId !== undefined);
    expect(a.approvalIds).toEqual([signed.claims.approvalId]);
    await h.hub.queueApproval(signed);
    await handled(h);
    expect(serial(h, 'rep')).toBe(1);
    expect(h.agent.store.applyRecord(runId)?.apply).toEqual(a);
  });

  it('refuses an approved run that a later plan superseded, naming the newer run', {
    timeout: 120_000,
  }, async () => {
    const first = await planNow(h, 'cache');
    const second = await planNow(h, 'cache');
    expect(doc(h).runs[second]).toBeDefined(); // a different plan, not a confirmation
    await approve(h, claimsFor(h, first));
    const a = await settles(h, first, (x) => x.state === 'refused');
    expect(a.reason).toBe(`superseded by ${second}`);
    expect(serial(h, 'cache')).toBe(0);
  });

  it('records apply-failed with a redacted excerpt when the apply fails part-way', {
    timeout: 120_000,
  }, async () => {
    const runId = await planNow(h, 'queue');
    await approve(h, claimsFor(h, runId));
    const a = await settles(h, runId, (x) => x.state === 'apply-failed');
    expect(a.reason).toBe('exit-1');
    expect(a.errorExcerpt).toContain('InsufficientInstanceCapacity');
    expect(a.finishedAt).toBeGreaterThanOrEqual(a.startedAt ?? Number.POSITIVE_INFINITY);
  });

  it('records apply-failed (stale-plan) when the state changed since the plan', {
    timeout: 120_000,
  }, async () => {
    const runId = await planNow(h, 'stale');
    // Someone applied from elsewhere: the state serial moved on.
    writeFileSync(join(h.dir, 'stale', '.fake-terraform', 'state.json'), JSON.stringify({ serial: 7 }));
    await approve(h, claimsFor(h, runId));
    const a = await settles(h, runId, (x) => x.state === 'apply-failed');
    expect(a.reason).toBe('stale-plan');
    expect(a.errorExcerpt).toContain('Saved plan is stale');
    // The cell is planned again: the same plan, yet a run of its own with a plan file, so the cell
    // can be approved again (a confirmation of the failed run would leave it unapprovable).
    const next = (await settles(h, runId, (x) => x.nextRunId !== undefined)).nextRunId as string;
    expect(next > runId).toBe(true);
    expect(doc(h).cells['prod/stale']?.runId).toBe(next);
    expect(doc(h).runs[next]?.summary.status).toBe('changes');
    expect(existsSync(planFile(next))).toBe(true);
    await approve(h, claimsFor(h, next));
    const again = await settles(h, next, (x) => x.state === 'applied' && x.nextRunId !== undefined);
    expect(doc(h).runs[again.nextRunId as string]?.summary.status).toBe('clean');
  });
});
