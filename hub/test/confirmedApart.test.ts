import * as A from '@automerge/automerge';
import { decodeBundle, decodePayload, generateSigningKeyPair } from '@driftline/protocol';
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

/** The newest ack on the downlink for `docId`, decoded. */
async function lastAck(h: Hub, site: string) {
  const rows = (await h.store.readDownlink(site, 0, 100)).filter((r) => r.kind === 'ack');
  const row = rows.at(-1);
  if (!row) throw new Error('no ack on the downlink');
  const b = decodeBundle(row.bytes);
  if (!b.ok) throw b.error;
  const p = decodePayload('ack', b.value.payload);
  if (!p.ok) throw new Error('the ack payload does not decode');
  return p.value;
}

/**
 * Decision 330, the same in every store: a confirmation written apart from its cell (`confirmed[key]`)
 * moves the cell row's plannedAt and commit as a rewritten cell did; the ack says the hub reads the
 * map only to an agent whose document has it.
 */
async function confirmationApart(h: Hub) {
  const a = await AgentSim.create('ship-7', 'a1', h.clock);
  const old = await AgentSim.create('ship-7', 'a2', h.clock);
  for (const x of [a, old])
    await enrol(h.store, { site: x.site, agent: x.agent, key: await x.publicKeyText() }, h.clock.now());
  const runId = a.plan('prod', 'net', 'clean', { planHash: 'c'.repeat(64) });
  a.declareConfirmed();
  await h.ingest.accept('relay-1', [await a.delta()]);
  a.acked = A.getHeads(a.doc);
  const ack = await lastAck(h, 'ship-7');
  expect(ack.doc).toBe('ship-7/a1/epoch-1');
  expect(ack.readsConfirmed).toBe(true);
  const first = await h.store.getCell('ship-7', 'prod', 'net');

  h.clock.advance(6 * 3600_000);
  a.confirmApart('prod', 'net', { commit: 'b'.repeat(40) });
  const confirmedAt = h.clock.now();
  await h.ingest.accept('relay-1', [await a.delta()]);
  a.acked = A.getHeads(a.doc);
  const cell = await h.store.getCell('ship-7', 'prod', 'net');
  expect(cell).toMatchObject({ runId, status: 'clean', commit: 'b'.repeat(40), planHash: 'c'.repeat(64) });
  expect(cell?.plannedAt).toBe(confirmedAt);
  expect(cell?.plannedAt).toBeGreaterThan(first?.plannedAt ?? Number.POSITIVE_INFINITY);
  expect(
    await h.store.listRuns({ site: 'ship-7', environment: 'prod', component: 'net', limit: 10 }),
  ).toHaveLength(1);

  // A second confirmation of the same entry moves it again.
  h.clock.advance(6 * 3600_000);
  a.confirmApart('prod', 'net');
  await h.ingest.accept('relay-1', [await a.delta()]);
  expect((await h.store.getCell('ship-7', 'prod', 'net'))?.plannedAt).toBe(h.clock.now());

  // An agent without the map (older than decision 330) gets acks without the field its schema refuses.
  old.plan('prod', 'db');
  await h.ingest.accept('relay-1', [await old.delta()]);
  const oldAck = await lastAck(h, 'ship-7');
  expect(oldAck.doc).toBe('ship-7/a2/epoch-1');
  expect('readsConfirmed' in oldAck).toBe(false);
}

describe('confirmations written apart from their cell (decision 330)', () => {
  const open: { close: () => Promise<void> }[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  for (const kind of ['memory', 'sqlite'] as const)
    it(`move the cell's plannedAt and commit: ${kind} store`, async () => {
      const h = await makeHarness(kind);
      open.push(h);
      await confirmationApart(h);
    });
});

describePg('confirmations written apart from their cell (decision 330): PostgreSQL store', (server) => {
  it("move the cell's plannedAt and commit", async () => {
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
      await confirmationApart({ store, ingest, clock });
    } finally {
      await store.close();
    }
  });
});
