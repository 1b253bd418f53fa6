import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../adapters/memory/MemoryHubStore.js';
import type { CellRow } from '../ports/HubStore.js';
import { MAX_GATE_CELLS, RefQueries } from './RefQueries.js';

const cell = (i: number, status: CellRow['status'], commit = 'c1'): CellRow => ({
  site: `s-${String(i).padStart(4, '0')}`,
  environment: 'prod',
  component: 'net',
  agent: 'a1',
  status,
  counts: null,
  reason: null,
  runId: `R${i}`,
  plannedAt: 1000,
  receivedAt: 1000,
  expectedIntervalS: 60,
  planHash: null,
  staleNotifiedFor: null,
  ref: 'main',
  commit,
});

describe('the ref gate of a large ref (decision 615)', () => {
  it('counts every cell but lists only those not complete once the ref touches more than MAX_GATE_CELLS', async () => {
    const store = new MemoryHubStore();
    const n = MAX_GATE_CELLS + 5;
    const status = (i: number): CellRow['status'] => (i === 7 ? 'failed' : i === 9 ? 'blocked' : 'clean');
    await store.commit({
      cells: Array.from({ length: n }, (_, i) => cell(i, status(i), i === 11 ? 'c0' : 'c1')),
    });
    const gate = await new RefQueries(store).status('main', 'c1');
    expect(gate?.counts).toEqual({ complete: n - 3, pending: 1, blocked: 1, failed: 1, total: n });
    expect(gate?.state).toBe('failed');
    expect(gate?.cells.map((c) => `${c.site} ${c.state}`)).toEqual([
      's-0007 failed',
      's-0009 blocked',
      's-0011 pending',
    ]);
    // At most MAX_GATE_CELLS cells: every cell of a ref that touches no more.
    await store.commit({ cells: [cell(7, 'clean'), cell(9, 'clean'), cell(11, 'clean')] });
    const done = await new RefQueries(store).status('main', 'c1');
    expect([done?.state, done?.cells.length]).toEqual(['complete', 0]);
  });
});
