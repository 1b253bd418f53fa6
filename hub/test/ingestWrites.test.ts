import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as A from '@automerge/automerge';
import { generateSigningKeyPair } from '@driftline/protocol';
import { describe, expect, it, vi } from 'vitest';
import { MemoryHubStore } from '../src/adapters/memory/MemoryHubStore.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { DocReplicas } from '../src/core/DocReplicas.js';
import { enrol } from '../src/core/enrolment.js';
import { Ingest } from '../src/core/Ingest.js';
import type { HubStore, WriteSet } from '../src/ports/HubStore.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { AgentSim, TestClock } from './agentSim.js';
import { describePg } from './postgres.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/** The store, with every write set it commits kept in `writes` (a wrapper at the port, no mocking). */
function recording(store: HubStore): { store: HubStore; writes: WriteSet[] } {
  const writes: WriteSet[] = [];
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'commit')
        return (w: WriteSet) => {
          writes.push(w);
          return target.commit(w);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { store: wrapped, writes };
}

/**
 * What an ingest writes follows what changed, not the document (decision 350): after 20 cells, a
 * delta that changes one plan writes one run, one cell row and one history row; one that confirms one
 * cell apart (decision 330) writes that cell's row and its history row, no run.
 */
async function oneCellWrites(base: HubStore, shared: boolean) {
  const { store, writes } = recording(base);
  const clock = new TestClock();
  const ingest = new Ingest({
    store,
    clock,
    ids: ulidGen(clock),
    replicas: new DocReplicas(store, { shared }),
    hubPrivateKey: (await generateSigningKeyPair()).privateKey,
    webhookUrls: [],
    log: { warn: () => {} },
    count: { refused: () => {}, merged: () => {} },
  });
  const a = await AgentSim.create('ship-7', 'a1', clock);
  await enrol(store, { site: a.site, agent: a.agent, key: await a.publicKeyText() }, clock.now());
  for (let c = 0; c < 20; c++) a.plan('prod', `c${c}`, 'clean', { planHash: `${c % 10}`.repeat(64) });
  a.declareConfirmed();
  await ingest.accept('relay-1', [await a.delta()]);
  a.acked = A.getHeads(a.doc);
  expect(writes.at(-1)?.cells).toHaveLength(20);

  clock.advance(60_000);
  const runId = a.plan('prod', 'c7', 'drift', { planHash: 'd'.repeat(64) });
  await ingest.accept('relay-1', [await a.delta()]);
  a.acked = A.getHeads(a.doc);
  const changed = writes.at(-1);
  expect(changed?.runs?.map((r) => r.runId)).toEqual([runId]);
  expect(changed?.cells?.map((c) => c.component)).toEqual(['c7']);
  expect(changed?.history?.map((h) => h.component)).toEqual(['c7']);

  clock.advance(60_000);
  a.confirmApart('prod', 'c3');
  await ingest.accept('relay-1', [await a.delta()]);
  const confirmed = writes.at(-1);
  expect(confirmed?.runs).toEqual([]);
  expect(confirmed?.cells?.map((c) => [c.component, c.plannedAt])).toEqual([['c3', clock.now()]]);
  expect(confirmed?.history?.map((h) => h.component)).toEqual(['c3']);
}

describe('an ingest writes the rows of what changed, not of the whole document', () => {
  it('memory store', async () => {
    await oneCellWrites(new MemoryHubStore(), false);
  });
  it('sqlite store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-writes-'));
    const store = new SqliteHubStore(join(dir, 'hub.db'));
    try {
      await oneCellWrites(store, false);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describePg('an ingest writes the rows of what changed: PostgreSQL store', (server) => {
  it('writes one row per changed cell', async () => {
    const url = await server().createDatabase();
    const store = new PostgresHubStore(new PgDatabase({ url, password: server().password }));
    try {
      await oneCellWrites(store, true);
    } finally {
      await store.close();
    }
  });
});
