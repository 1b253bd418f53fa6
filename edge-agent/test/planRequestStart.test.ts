import * as A from '@automerge/automerge';
import { AgentDocSchema, asSiteId, plainAgentDoc } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { memoryLedger } from './agentStorageFixtures.js';
import { runId, summary } from './helpers/storeFixtures.js';

const request = (requestId: string) => ({
  type: 'plan-request' as const,
  requestId,
  site: asSiteId('ship-7'),
  environment: 'prod',
  component: 'network',
  requestedAt: 1_000,
  expiresAt: 2_000_000_000_000,
});

/**
 * The agent's signed word that it started the plan a hub request asked for, so the hub shows it running
 * (docs/decisions/560-plan-request-states.md): written as the plan starts, by the rule that stamps the
 * request with its run when the plan finishes (decision 300).
 */
describe('AgentLedger: a requested plan starting', () => {
  it('says when the plan of a request’s cell starts, once, and only for that cell, ref and commit', () => {
    let now = 1_700_000_000_000;
    const { ledger: s } = memoryLedger({ now: () => now });
    s.record({ runId: runId(), summary: summary() });
    s.recordPlanRequest(request('R1'), 'accepted', null);
    s.recordPlanRequest({ ...request('R2'), component: 'dns' }, 'accepted', null);
    s.recordPlanRequest({ ...request('R3'), ref: 'pr/7' }, 'accepted', null);
    s.recordPlanRequest({ ...request('R4'), commit: 'c'.repeat(40) }, 'accepted', null);
    s.recordPlanRequest({ ...request('R5') }, 'refused', 'not in the local config');
    const read = () => AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1)))).requests ?? {};
    const before = s.pending().length;
    now += 2_000;
    const startedAt = now;
    expect(s.planStarting({ environment: 'prod', component: 'network' })).toEqual(['R1']);
    expect(read().R1).toMatchObject({ state: 'accepted', startedAt });
    for (const id of ['R2', 'R3', 'R4', 'R5']) expect(read()[id]).not.toHaveProperty('startedAt');
    // It travels: a change the hub has not acknowledged.
    expect(s.pending().length).toBeGreaterThanOrEqual(before);
    expect(s.pending().length).toBeGreaterThan(0);
    // A second plan of the cell starting (say, after a restart) does not move the time.
    now += 1_000;
    expect(s.planStarting({ environment: 'prod', component: 'network' })).toEqual([]);
    expect(read().R1?.startedAt).toBe(startedAt);
    // The ref's and the commit's plans start theirs.
    expect(s.planStarting({ environment: 'prod', component: 'network', ref: 'pr/7' })).toEqual(['R3']);
    expect(s.planStarting({ environment: 'prod', component: 'network', commit: 'c'.repeat(40) })).toEqual([
      'R4',
    ]);
    // The plan finishing stamps its run beside the start.
    const iso = (ms: number) => new Date(ms).toISOString();
    const answer = runId();
    s.record({
      runId: answer,
      summary: summary({ startedAt: iso(startedAt), finishedAt: iso(now), status: 'drift' }),
    });
    expect(read().R1).toMatchObject({ startedAt, runId: answer, answeredAt: now });
  });

  it('writes nothing when no request waits for the plan starting', () => {
    const { ledger: s } = memoryLedger({ now: () => 1_700_000_000_000 });
    s.record({ runId: runId(), summary: summary() });
    const heads = A.getHeads(s.loadEpoch(1));
    expect(s.planStarting({ environment: 'prod', component: 'network' })).toEqual([]);
    expect(A.getHeads(s.loadEpoch(1))).toEqual(heads);
  });
});
