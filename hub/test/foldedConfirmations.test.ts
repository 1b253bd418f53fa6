import * as A from '@automerge/automerge';
import { generateSigningKeyPair } from '@driftline/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { DocReplicas } from '../src/core/DocReplicas.js';
import { enrol } from '../src/core/enrolment.js';
import { Ingest } from '../src/core/Ingest.js';
import type { HubStore } from '../src/ports/HubStore.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { AgentSim, TestClock } from './agentSim.js';
import { makeHarness } from './harness.js';
import { describePg } from './postgres.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

interface Hub {
  store: HubStore;
  ingest: Ingest;
  clock: TestClock;
}

/**
 * Decision 370, the same in every store: the agent holds a round's confirmations and writes them into its
 * document as one change, several rounds folded into one entry (`n` > 1) when they waited; every cell
 * shows the time of its own last confirming plan, and a cell the change does not name keeps its own.
 */
async function foldedConfirmations(h: Hub) {
  const a = await AgentSim.create('ship-7', 'a1', h.clock);
  await enrol(h.store, { site: a.site, agent: a.agent, key: await a.publicKeyText() }, h.clock.now());
  const cells = ['net', 'db', 'dns', 'cdn'];
  const runIds = cells.map((c) => a.plan('prod', c, 'clean', { planHash: 'c'.repeat(64) }));
  a.declareConfirmed();
  await h.ingest.accept('relay-1', [await a.delta()]);
  a.acked = A.getHeads(a.doc);
  const before = await h.store.getCell('ship-7', 'prod', 'cdn');

  const base = h.clock.now();
  // Three cells confirmed in one change: `net` three times (two rounds held while offline), `db` and
  // `dns` once, each at its own finish time; `cdn` not re-planned.
  const confirmed: Record<string, { at: number; n: number }> = {
    'prod/net': { at: base + 7_200_000, n: 3 },
    'prod/db': { at: base + 3_600_000 + 41_000, n: 1 },
    'prod/dns': { at: base + 7_200_000 + 5_000, n: 1 },
  };
  h.clock.advance(7_300_000);
  a.doc = A.change(a.doc, (d) => {
    const doc = d as unknown as { confirmed: Record<string, A.ImmutableString> };
    for (const [k, v] of Object.entries(confirmed))
      doc.confirmed[k] = new A.ImmutableString(JSON.stringify(v));
  });
  await h.ingest.accept('relay-1', [await a.delta()]);
  for (const [i, c] of cells.entries()) {
    const cell = await h.store.getCell('ship-7', 'prod', c);
    expect(cell?.runId).toBe(runIds[i]);
    expect(cell?.plannedAt).toBe(confirmed[`prod/${c}`]?.at ?? before?.plannedAt);
  }
  expect(
    await h.store.listRuns({ site: 'ship-7', environment: 'prod', component: 'net', limit: 10 }),
  ).toHaveLength(1);
}

describe('confirmations folded into one change (decision 370)', () => {
  const open: { close: () => Promise<void> }[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  for (const kind of ['memory', 'sqlite'] as const)
    it(`show each cell's own plannedAt: ${kind} store`, async () => {
      const h = await makeHarness(kind);
      open.push(h);
      await foldedConfirmations(h);
    });
});

describePg('confirmations folded into one change (decision 370): PostgreSQL store', (server) => {
  it("show each cell's own plannedAt", async () => {
    const url = await server().createDatabase();
    const store = new PostgresHubStore(new PgDatabase({ url, password: server().password }));
    try {
      const clock = new TestClock();
      const ingest = new Ingest({
        store,
        clock,
        ids: ulidGen(clock),
        replicas: new DocReplicas(store, { maxChunks: 2, shared: true }),
        hubPrivateKey: (await generateSigningKeyPair()).privateKey,
        webhookUrls: [],
        log: { warn: () => {} },
        count: { refused: () => {}, merged: () => {} },
      });
      await foldedConfirmations({ store, ingest, clock });
    } finally {
      await store.close();
    }
  });
});
