import * as A from '@automerge/automerge';
import { generateSigningKeyPair } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../src/adapters/memory/MemoryHubStore.js';
import { DocReplicas } from '../src/core/DocReplicas.js';
import { enrol } from '../src/core/enrolment.js';
import { Ingest } from '../src/core/Ingest.js';
import type { HubStore, WriteSet } from '../src/ports/HubStore.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { AgentSim, TestClock } from './agentSim.js';

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

describe('a batch of more documents than a part holds (decision 475)', () => {
  it('commits it in parts of at most partDocs documents, each document whole, receipts in batch order', async () => {
    const { store, writes } = recording(new MemoryHubStore());
    const clock = new TestClock();
    const ingest = new Ingest({
      store,
      clock,
      ids: ulidGen(clock),
      replicas: new DocReplicas(store),
      hubPrivateKey: (await generateSigningKeyPair()).privateKey,
      webhookUrls: [],
      log: { warn: () => {} },
      count: { refused: () => {}, merged: () => {} },
      partDocs: 2,
    });
    const agents: AgentSim[] = [];
    for (const site of ['s-a', 's-b', 's-c', 's-d', 's-e']) {
      const a = await AgentSim.create(site, 'a1', clock);
      await enrol(store, { site, agent: 'a1', key: await a.publicKeyText() }, clock.now());
      a.plan('prod', 'web', 'clean');
      agents.push(a);
    }
    const [a, b, c, d, e] = agents as [AgentSim, AgentSim, AgentSim, AgentSim, AgentSim];
    const first = await a.delta();
    a.acked = A.getHeads(a.doc);
    a.plan('prod', 'db', 'drift');
    const second = await a.delta();
    const bundles = [first, await b.delta(), new Uint8Array([1, 2, 3]), await c.delta(), second];
    bundles.push(await d.delta(), await e.delta());
    writes.length = 0;

    const receipts = await ingest.accept('relay-1', bundles);

    expect(receipts.map((r) => [r.index, r.status])).toEqual([
      [0, 'stored'],
      [1, 'stored'],
      [2, 'rejected'],
      [3, 'stored'],
      [4, 'stored'],
      [5, 'stored'],
      [6, 'stored'],
    ]);
    // s-a's two bundles in the first part with s-b (the refused bytes join it), then s-c + s-d, then s-e.
    const parts = writes.filter((w) => (w.bundles ?? []).length > 0);
    expect(parts.map((w) => [...new Set((w.cells ?? []).map((cell) => cell.site))].sort())).toEqual([
      ['s-a', 's-b'],
      ['s-c', 's-d'],
      ['s-e'],
    ]);
    expect(parts[0]?.bundles).toHaveLength(3);
    expect(
      (await store.getCells([{ site: 's-a', environment: 'prod', component: 'db', atRef: null }]))[0],
    ).toMatchObject({ status: 'drift' });
  });
});
