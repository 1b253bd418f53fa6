import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDriftStore } from '../src/adapters/sqlite/SqliteDriftStore.js';
import { Drift } from '../src/core/drift/Drift.js';
import type { DriftStore } from '../src/ports/DriftStore.js';
import type { CellRow, RunRow } from '../src/ports/HubStore.js';

const run = (site: string, component: string, n: number, drifted: boolean): RunRow =>
  ({
    runId: `${site}-${component}-${n}`,
    site,
    environment: 'prod',
    component,
    plannedAt: n * 1000,
    summary: {
      status: drifted ? 'drift' : 'clean',
      drifted: drifted ? [{ address: 'aws_s3_bucket.b', type: 'aws_s3_bucket', attributes: ['tags'] }] : [],
    },
  }) as unknown as RunRow;
const confirmed = (r: RunRow, at: number): CellRow =>
  ({
    site: r.site,
    environment: r.environment,
    component: r.component,
    runId: r.runId,
    plannedAt: at,
  }) as CellRow;

/**
 * A batch's drift observation reads and writes the drift store once, whatever its size. It read each
 * run's mark and open episodes and wrote each run apart: three round trips per result on PostgreSQL,
 * so observation fell minutes behind ingest and every waiting batch's runs and cells stayed in memory
 * (fleetScale: the hub's heap past 1 GB at 1,000 × 200).
 */
describe('drift observation per batch (real SQLite)', () => {
  let dir: string;
  let store: SqliteDriftStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hub-drift-batch-'));
    store = new SqliteDriftStore(join(dir, 'drift.db'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the cells once and records once per batch, with the same episodes as one run at a time', async () => {
    const calls: string[] = [];
    const counted = new Proxy(store, {
      get(target, p, receiver) {
        const v = Reflect.get(target, p, receiver);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          calls.push(String(p));
          return v.apply(target, args);
        };
      },
    }) as DriftStore;
    const drift = new Drift({
      drift: counted,
      commit: async () => {},
      clock: { now: () => 1_000_000 },
      ids: { next: () => '01J' },
      webhookUrls: [],
    });
    const comps = Array.from({ length: 200 }, (_, i) => `c${i}`);
    // Round 1: every cell planned, one in ten drifted; the same cell twice in a batch keeps its order.
    const first = comps.map((c, i) => run('s-1', c, 1, i % 10 === 0));
    await drift.observe([...first, run('s-1', 'c0', 2, false)]);
    const reads = calls.filter((c) => c === 'openOf' || c === 'markOf' || c === 'cellsState');
    expect(reads).toEqual(['cellsState']);
    expect(calls.filter((c) => c === 'record')).toHaveLength(1);
    // Round 2: the drifted cells confirmed unchanged (no run): their episodes' last seen moves.
    calls.length = 0;
    await drift.observe(
      [],
      first.filter((_, i) => i % 10 === 0).map((r) => confirmed(r, 5000)),
    );
    expect(calls.filter((c) => c !== 'exclusive')).toEqual(['cellsState', 'record']);
    const open = await store.listOpen();
    expect(open.map((e) => e.component).sort()).toEqual(comps.filter((_, i) => i % 10 === 0 && i > 0).sort());
    expect(open.every((e) => e.lastSeen === 5000 && e.firstSeen === 1000)).toBe(true);
    // c0 drifted at run 1 and was clean at run 2 of the same batch: resolved, not open.
    expect((await store.list({ component: 'c0' }, 10)).map((r) => r.row.state)).toEqual(['resolved']);
  });
});
