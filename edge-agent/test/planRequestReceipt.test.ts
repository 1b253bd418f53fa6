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

  it('says from its first facts that it confirms what it receives (an empty map)', () => {
    const { ledger: s } = memoryLedger();
    s.updateFacts({ version: '0.1.0', cadenceS: { 'prod/network': 900 } });
    expect(s.pending()).toHaveLength(1); // written with the first push
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1))));
    expect(doc.requests).toEqual({});
  });
});
