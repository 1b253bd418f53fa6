import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKeyPair, type SigningKeyPair } from '@driftline/protocol';
import { MemoryHubStore } from '../src/adapters/memory/MemoryHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { MergePool } from '../src/adapters/threads/MergePool.js';
import { DocReplicas } from '../src/core/DocReplicas.js';
import { enrol } from '../src/core/enrolment.js';
import { Ingest } from '../src/core/Ingest.js';
import type { RefusalReason } from '../src/core/verify.js';
import type { HubStore } from '../src/ports/HubStore.js';
import { ulidGen } from '../src/ports/IdGen.js';
import type { AgentSim } from './agentSim.js';
import { TestClock } from './agentSim.js';

export interface Harness {
  store: HubStore;
  ingest: Ingest;
  /** The replicas of the current `ingest` (a restart makes new ones). */
  replicas: DocReplicas;
  clock: TestClock;
  hubKeys: SigningKeyPair;
  refused: Partial<Record<RefusalReason, number>>;
  /** Path clock estimates held back, by reason (docs/decisions/230-time-a-hop-cannot-forge.md). */
  clockHeld: Record<string, number>;
  /** What the ingest logged as warnings, in order. */
  warnings: { obj: object; msg: string }[];
  /** Document entries refused for their key (decision 570). */
  entriesRefused: { n: number };
  enrol(a: AgentSim): Promise<void>;
  /** Rebuilds the Ingest over the same store, as a restarted hub would. */
  restart(): Ingest;
  close(): Promise<void>;
}

export async function makeHarness(
  kind: 'memory' | 'sqlite' = 'memory',
  opts: { webhookUrls?: string[]; clock?: TestClock; mergeWorkers?: number } = {},
): Promise<Harness> {
  const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'hub-ingest-')) : null;
  const store: HubStore = dir ? new SqliteHubStore(join(dir, 'hub.db')) : new MemoryHubStore();
  const clock = opts.clock ?? new TestClock();
  const hubKeys = await generateSigningKeyPair();
  const refused: Partial<Record<RefusalReason, number>> = {};
  const clockHeld: Record<string, number> = {};
  const warnings: Harness['warnings'] = [];
  const entriesRefused = { n: 0 };
  const merger = opts.mergeWorkers ? new MergePool(opts.mergeWorkers) : undefined;
  const newReplicas = () => new DocReplicas(store, { maxChunks: 4, ...(merger ? { merger } : {}) });
  let replicas = newReplicas();
  const build = () =>
    new Ingest({
      store,
      clock,
      ids: ulidGen(clock),
      replicas,
      hubPrivateKey: hubKeys.privateKey,
      webhookUrls: opts.webhookUrls ?? [],
      log: { warn: (obj, msg) => warnings.push({ obj, msg }) },
      count: {
        refused: (r) => {
          refused[r] = (refused[r] ?? 0) + 1;
        },
        merged: () => {},
        clockHeld: (r) => {
          clockHeld[r] = (clockHeld[r] ?? 0) + 1;
        },
        entriesRefused: (n) => {
          entriesRefused.n += n;
        },
      },
    });
  const h: Harness = {
    store,
    clock,
    hubKeys,
    refused,
    clockHeld,
    warnings,
    entriesRefused,
    ingest: build(),
    get replicas() {
      return replicas;
    },
    async enrol(a) {
      const r = await enrol(
        store,
        { site: a.site, agent: a.agent, key: await a.publicKeyText() },
        clock.now(),
      );
      if (!r.ok) throw new Error(r.error);
    },
    restart() {
      replicas = newReplicas();
      h.ingest = build();
      return h.ingest;
    },
    async close() {
      await merger?.close();
      await store.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}
