import { MemoryHubStore } from '../src/adapters/memory/MemoryHubStore.js';
import { DocReplicas } from '../src/core/DocReplicas.js';
import { enrol } from '../src/core/enrolment.js';
import { Batch } from '../src/core/ingest/batch.js';
import type { IngestDeps } from '../src/core/ingestTypes.js';
import type { HubStore } from '../src/ports/HubStore.js';
import { AgentSim, TestClock } from './agentSim.js';

/** A memory store with one enrolled agent, for the ingest steps' own tests. */
export async function stepFixture(site = 'ship-7', agent = 'a1') {
  const store: HubStore = new MemoryHubStore();
  const clock = new TestClock();
  const sim = await AgentSim.create(site, agent, clock);
  const r = await enrol(store, { site, agent, key: await sim.publicKeyText() }, clock.now());
  if (!r.ok) throw new Error(r.error);
  const refused: string[] = [];
  const warnings: string[] = [];
  const deps: Pick<IngestDeps, 'log' | 'count' | 'webhookUrls'> = {
    log: { warn: (_o, msg) => warnings.push(msg) },
    count: { refused: (why) => refused.push(why), merged: () => {} },
    webhookUrls: ['http://127.0.0.1:9/hook'],
  };
  return {
    store,
    clock,
    sim,
    deps,
    refused,
    warnings,
    replicas: new DocReplicas(store),
    batch: (size: number) => new Batch(store, clock.now(), size),
  };
}
