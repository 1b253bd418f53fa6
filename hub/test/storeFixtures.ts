import type { CellRow, RunRow, WebhookRow } from '../src/ports/HubStore.js';

/** Rows for the HubStore contract suite. */
export function run(runId: string, receivedAt: number, status: RunRow['status'] = 'clean'): RunRow {
  return {
    runId,
    site: 'ship-7',
    agent: 'a1',
    environment: 'prod',
    component: 'net',
    status,
    counts: null,
    reason: null,
    plannedAt: receivedAt,
    receivedAt,
    unchanged: false,
    docId: 'ship-7/a1/epoch-1',
    detailBlob: null,
    summary: {
      component: 'net',
      environment: 'prod',
      status,
      startedAt: '2025-01-01T00:00:00.000Z',
      finishedAt: '2025-01-01T00:00:01.000Z',
    },
  };
}
export function cell(runId: string, receivedAt: number, status: CellRow['status'] = 'clean'): CellRow {
  return {
    site: 'ship-7',
    environment: 'prod',
    component: 'net',
    agent: 'a1',
    status,
    counts: null,
    reason: null,
    runId,
    plannedAt: receivedAt,
    receivedAt,
    expectedIntervalS: 60,
    planHash: null,
    staleNotifiedFor: null,
  };
}
export function hist(c: CellRow) {
  const { staleNotifiedFor: _s, planHash: _p, ...h } = c;
  return h;
}
export function hook(id: string, nextAt: number): WebhookRow {
  return {
    id,
    url: 'http://127.0.0.1:1/',
    event: 'drift',
    body: '{}',
    attempts: 0,
    nextAt,
    state: 'pending',
    lastError: null,
  };
}
