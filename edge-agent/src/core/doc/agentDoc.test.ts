import * as A from '@automerge/automerge';
import type { PlanSummary } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import {
  latestCells,
  mergeFacts,
  newEpochDoc,
  plainFacts,
  readDoc,
  recordRun,
  recordRuns,
  sealEpoch,
} from './agentDoc.js';

const hash = (c: string) => c.repeat(64);
function summary(over: Partial<PlanSummary> = {}): PlanSummary {
  return {
    component: 'network',
    environment: 'prod',
    status: 'changes',
    counts: { add: 1, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 },
    resources: [
      { address: 'aws_vpc.main', type: 'aws_vpc', actions: ['create'], drift: false, changedAttributes: [] },
    ],
    startedAt: '2026-11-01T10:00:00.000Z',
    finishedAt: '2026-11-01T10:01:00.000Z',
    planHash: hash('a') as PlanSummary['planHash'],
    ...over,
  };
}

describe('agent document', () => {
  it('records runs that finished together as one change, comparing a second run of a cell with the first', () => {
    const doc = newEpochDoc('ship-7', 'a1', 1);
    const before = A.getBackend(doc).stats().numChanges;
    const { doc: next, unchanged } = recordRuns(doc, [
      { runId: '01JC0000000000000000000001', summary: summary(), recordedAt: 1 },
      { runId: '01JC0000000000000000000002', summary: summary({ component: 'dns' }), recordedAt: 1 },
      { runId: '01JC0000000000000000000003', summary: summary(), recordedAt: 2 },
    ]);
    expect(A.getBackend(next).stats().numChanges - before).toBe(1);
    expect(unchanged).toEqual([false, false, true]);
    const plain = readDoc(next);
    expect(Object.keys(plain.runs).sort()).toEqual([
      '01JC0000000000000000000001',
      '01JC0000000000000000000002',
    ]);
    expect(plain.cells['prod/network']?.confirmations).toBe(1);
  });

  it("records an equal plan as a run of its own when the cell's run may not be confirmed (its plan file was used)", () => {
    const first = recordRun(newEpochDoc('ship-7', 'a1', 1), {
      runId: '01JC0000000000000000000001',
      summary: summary(),
      recordedAt: 1,
    }).doc;
    const asked: string[] = [];
    const r = recordRun(first, {
      runId: '01JC0000000000000000000002',
      summary: summary(),
      recordedAt: 2,
      mayConfirm: (runId) => {
        asked.push(runId);
        return false;
      },
    });
    expect(asked).toEqual(['01JC0000000000000000000001']);
    expect(r.unchanged).toBe(false);
    expect(readDoc(r.doc).cells['prod/network']?.runId).toBe('01JC0000000000000000000002');
    const confirmed = recordRun(r.doc, {
      runId: '01JC0000000000000000000003',
      summary: summary(),
      recordedAt: 3,
      mayConfirm: () => true,
    });
    expect(confirmed.unchanged).toBe(true);
  });

  it('writes only the facts that differ from the known ones, and knows what the facts are afterwards', () => {
    const facts = {
      version: '0.1.0',
      cadenceS: { 'prod/network': 900, 'prod/dns': 900 },
      contactIntervalS: 900,
    };
    const first = recordRuns(newEpochDoc('ship-7', 'a1', 1), [], undefined).doc;
    const withFacts = recordRun(
      first,
      { runId: '01JC0000000000000000000001', summary: summary(), recordedAt: 1 },
      {
        ...facts,
        queueDepth: 1,
      } as never,
    ).doc;
    const known = mergeFacts(null, { ...facts, queueDepth: 1 } as never);
    expect(known).toEqual(plainFacts(withFacts));
    const ops = A.getBackend(withFacts).stats().numOps;
    const next = recordRuns(
      withFacts,
      [{ runId: '01JC0000000000000000000002', summary: summary({ component: 'dns' }), recordedAt: 2 }],
      { ...facts, queueDepth: 2 } as never,
      known,
    ).doc;
    // the run, its cell, and queueDepth: nothing of the unchanged cadence map
    expect(A.getBackend(next).stats().numOps - ops).toBe(3);
    expect(plainFacts(next)).toEqual(mergeFacts(known, { ...facts, queueDepth: 2 } as never));
  });

  it('records a run as a run entry and the cell, leaving resources to the detail blob', () => {
    const { doc, unchanged } = recordRun(newEpochDoc('ship-7', 'a1', 1), {
      runId: '01JC0000000000000000000001',
      summary: summary(),
      detailBlob: hash('b'),
      recordedAt: 1,
    });
    expect(unchanged).toBe(false);
    const plain = readDoc(doc);
    expect(plain.cells['prod/network']?.status).toBe('changes');
    expect(plain.runs['01JC0000000000000000000001']?.detailBlob).toBe(hash('b'));
    expect(JSON.stringify(plain)).not.toContain('aws_vpc.main');
  });

  it('writes a run and its cell as one Automerge operation each (what the hub pays to merge)', () => {
    const doc = newEpochDoc('ship-7', 'a1', 1);
    const before = A.getBackend(doc).stats().numOps;
    const { doc: next } = recordRun(doc, {
      runId: '01JC0000000000000000000001',
      summary: summary({ git: { commit: 'abcdef1', branch: 'main' }, terraformVersion: '1.9.5' }),
      detailBlob: hash('b'),
      recordedAt: 1,
    });
    expect(A.getBackend(next).stats().numOps - before).toBe(2);
    // The map-shaped run the hub still reads from older agents took one operation per field.
    expect(readDoc(next).runs['01JC0000000000000000000001']?.summary.git?.branch).toBe('main');
  });

  it('records an identical plan only as a confirmation: no new run, plannedAt moves', () => {
    let { doc } = recordRun(newEpochDoc('ship-7', 'a1', 1), {
      runId: '01JC0000000000000000000001',
      summary: summary(),
      recordedAt: 1,
    });
    const before = A.getHeads(doc);
    ({ doc } = recordRun(doc, {
      runId: '01JC0000000000000000000002',
      summary: summary({ finishedAt: '2026-11-01T11:01:00.000Z' }),
      recordedAt: 2,
    }));
    const plain = readDoc(doc);
    expect(Object.keys(plain.runs)).toEqual(['01JC0000000000000000000001']);
    expect(plain.cells['prod/network']).toMatchObject({
      runId: '01JC0000000000000000000001',
      plannedAt: Date.parse('2026-11-01T11:01:00.000Z'),
      unchangedSince: Date.parse('2026-11-01T10:01:00.000Z'),
      confirmations: 1,
    });
    // The confirmation is small on the wire: the cell again (one packed value), no run.
    expect(A.saveSince(doc, before).length).toBeLessThan(500);
    expect(A.saveSince(doc, before).length).toBeLessThan(A.saveSince(doc, []).length / 2);
  });

  it('treats a changed status with the same hash as a new result', () => {
    let { doc } = recordRun(newEpochDoc('s', 'a', 1), {
      runId: '01JC0000000000000000000001',
      summary: summary(),
      recordedAt: 1,
    });
    const r = recordRun(doc, {
      runId: '01JC0000000000000000000002',
      summary: summary({ status: 'drift' }),
      recordedAt: 2,
    });
    doc = r.doc;
    expect(r.unchanged).toBe(false);
    expect(Object.keys(readDoc(doc).runs)).toHaveLength(2);
  });

  it('seeds a new epoch with the latest result per cell and marks the old one sealed', () => {
    const { doc } = recordRun(newEpochDoc('s', 'a', 1), {
      runId: '01JC0000000000000000000001',
      summary: summary(),
      recordedAt: 1,
    });
    const sealed = readDoc(sealEpoch(doc, 99));
    expect(sealed.sealedAt).toBe(99);
    const next = readDoc(newEpochDoc('s', 'a', 2, latestCells(doc)));
    expect(next.epoch).toBe(2);
    expect(next.cells['prod/network']?.runId).toBe('01JC0000000000000000000001');
    expect(next.runs).toEqual({});
  });
});

describe('agent facts', () => {
  it('writes only the facts that changed, so a run with 200 declared cadences stays a small change', () => {
    const cadenceS = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`prod/c${i}`, 900]));
    const facts = (queueDepth: number) => ({
      version: '0.1.0',
      cadenceS,
      queueDepth,
      reportedAt: queueDepth,
    });
    let { doc } = recordRun(
      newEpochDoc('s', 'a', 1),
      { runId: '01JC0000000000000000000001', summary: summary(), recordedAt: 1 },
      facts(1),
    );
    const before = A.getHeads(doc);
    ({ doc } = recordRun(
      doc,
      { runId: '01JC0000000000000000000002', summary: summary({ component: 'dns' }), recordedAt: 2 },
      facts(2),
    ));
    expect(A.saveSince(doc, before).length).toBeLessThan(1200);
    expect(readDoc(doc).facts?.queueDepth).toBe(2);
    expect(Object.keys(readDoc(doc).facts?.cadenceS ?? {})).toHaveLength(200);
  });
});
