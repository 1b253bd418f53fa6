import { AgentSim, TestClock } from '../../../test/agentSim.js';
import { MemoryHubStore } from '../../adapters/memory/MemoryHubStore.js';
import type { HubStore } from '../../ports/HubStore.js';
import { DocReplicas } from '../DocReplicas.js';
import { enrol } from '../enrolment.js';
import type { IngestDeps } from '../ingestTypes.js';
import { Batch } from './batch.js';

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
