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

/** The agent's signed word that a hub plan request arrived (decision 230). */
describe('AgentLedger: plan requests in the document', () => {
  it('writes each plan request it receives into the document once, with its state and time', () => {
    let now = 1_700_000_000_000;
    const { ledger: s } = memoryLedger({ now: () => now });
    s.record({ runId: runId(), summary: summary() });
    expect(s.recordPlanRequest(request('R1'), 'accepted', null)).toBe(true);
    now += 5_000;
    expect(s.recordPlanRequest(request('R1'), 'accepted', null)).toBe(false); // the downlink is at-least-once
    expect(s.recordPlanRequest(request('R2'), 'refused', 'not in the local config')).toBe(true);
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1))));
    expect(doc.requests).toEqual({
      R1: { environment: 'prod', component: 'network', state: 'accepted', receivedAt: 1_700_000_000_000 },
      R2: {
        environment: 'prod',
        component: 'network',
        state: 'refused',
        receivedAt: 1_700_000_005_000,
        detail: 'not in the local config',
      },
    });
    // It travels: the pending delta holds it.
    expect(s.pending().length).toBeGreaterThan(0);
  });

  it('stamps a request with the first plan of its cell that started after it arrived, also an unchanged one', () => {
    let now = 1_700_000_100_000;
    const { ledger: s } = memoryLedger({ now: () => now });
    const iso = (ms: number) => new Date(ms).toISOString();
    const shown = runId();
    s.record({
      runId: shown,
      summary: summary({ startedAt: iso(now - 60_000), finishedAt: iso(now - 50_000) }),
    });
    // A scheduled plan starts at `now`; the request arrives 1 s later, while it runs.
    const underWay = now;
    now += 1_000;
    s.recordPlanRequest(request('R1'), 'accepted', null);
    s.recordPlanRequest({ ...request('R2'), component: 'dns' }, 'accepted', null);
    s.recordPlanRequest({ ...request('R3'), ref: 'pr/7' }, 'accepted', null);
    now += 4_000;
    // It finishes after the request arrived, with the same plan: it answers nothing.
    const before = runId();
    const r1 = s.record({
      runId: before,
      summary: summary({ startedAt: iso(underWay), finishedAt: iso(now) }),
    });
    expect(r1.unchanged).toBe(true);
    const read = () => AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1)))).requests ?? {};
    expect(read().R1).not.toHaveProperty('runId');
    // The plan the request started finds the same plan: it answers with the run the cell shows.
    const started = now;
    now += 3_000;
    s.record({ runId: runId(), summary: summary({ startedAt: iso(started), finishedAt: iso(now) }) });
    expect(read().R1).toMatchObject({ state: 'accepted', runId: shown, answeredAt: now });
    // Another cell and another ref are not answered by it.
    expect(read().R2).not.toHaveProperty('runId');
    expect(read().R3).toMatchObject({ ref: 'pr/7' });
    expect(read().R3).not.toHaveProperty('runId');
    // A changed plan of the pr/7 cell answers R3 with its own run.
    const pr = runId();
    s.record({
      runId: pr,
      cellRef: 'pr/7',
      summary: summary({ ref: 'pr/7', startedAt: iso(now), finishedAt: iso(now + 2_000), status: 'drift' }),
    });
    expect(read().R3).toMatchObject({ runId: pr, answeredAt: now + 2_000 });
    expect(read().R2).not.toHaveProperty('runId');
  });

  it('says from its first facts that it confirms what it receives (an empty map)', () => {
    const { ledger: s } = memoryLedger();
    s.updateFacts({ version: '0.1.0', cadenceS: { 'prod/network': 900 } });
    expect(s.pending()).toHaveLength(1); // written with the first push
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1))));
    expect(doc.requests).toEqual({});
  });
});
