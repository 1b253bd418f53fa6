import * as A from '@automerge/automerge';
import { decodeBundle, decodePayload, verifyBundle } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentSim } from './agentSim.js';
import { type Harness, makeHarness } from './harness.js';

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});
async function harness(kind: 'memory' | 'sqlite' = 'sqlite') {
  const h = await makeHarness(kind);
  open.push(h);
  return h;
}
const cellsOf = async (h: Harness) =>
  (await h.store.listCells()).map((c) => ({
    k: `${c.site}/${c.environment}/${c.component}`,
    runId: c.runId,
    status: c.status,
  }));
const runsOf = async (h: Harness, env: string, comp: string) =>
  (await h.store.listRuns({ site: 'ship-7', environment: env, component: comp, limit: 100 })).map(
    (r) => r.runId,
  );

describe('ingest', () => {
  it('merges a doc-delta into runs, cells and sites and queues a signed ack with the hub heads', async () => {
    const h = await harness();
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    await h.enrol(a);
    const runId = a.plan('prod', 'net', 'drift', { cadenceS: 600 });
    const delta = await a.delta();
    h.clock.advance(5_000);
    const receipts = await h.ingest.accept('relay-1', [delta]);
    expect(receipts.map((r) => r.status)).toEqual(['stored']);

    const cell = await h.store.getCell('ship-7', 'prod', 'net');
    expect(cell).toMatchObject({ runId, status: 'drift', expectedIntervalS: 600, receivedAt: h.clock.now() });
    // Offset estimate: created - received = -5s, so the plan time is read 5 s later on the hub's clock.
    expect(cell?.plannedAt).toBe(h.clock.now());
    expect(await h.store.getRun(runId)).toMatchObject({ status: 'drift', agent: 'a1' });
    expect(await h.store.getSite('ship-7')).toMatchObject({
      lastContactAt: h.clock.now(),
      upstream: 'relay-1',
    });
    expect(await h.store.getAgent('ship-7', 'a1')).toMatchObject({
      version: '0.1.0',
      queueDepth: 1,
      clockOffsetMs: -5000,
    });

    const [dl] = await h.store.readDownlink('ship-7', 0, 10);
    const ack = decodeBundle(dl!.bytes);
    if (!ack.ok) throw ack.error;
    expect(await verifyBundle(ack.value, h.hubKeys.publicKey)).toBe(true);
    const payload = decodePayload('ack', ack.value.payload);
    expect(payload.ok && payload.value.heads).toEqual(A.getHeads(a.doc));
  });

  it('takes a bundle that only announces a blob again, and acks the blob it holds (decision 412)', async () => {
    const h = await harness();
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    await h.enrol(a);
    const runId = a.plan('prod', 'net', 'drift', { cadenceS: 600 });
    expect((await h.ingest.accept('relay-1', [await a.delta()])).map((r) => r.status)).toEqual(['stored']);
    // the hub holds the detail, but the bundle that announced it never came (a relay faked its receipt)
    const sha256 = 'ab'.repeat(32);
    await h.store.commit({
      blobs: [{ sha256, size: 3, contentType: 'application/json', path: '/x', receivedAt: h.clock.now() }],
    });
    const again = await a.delta({ changes: new Uint8Array(0), blobs: [{ sha256, size: 3, runId }] });
    expect((await h.ingest.accept('relay-1', [again])).map((r) => r.status)).toEqual(['stored']);
    const rows = await h.store.readDownlink('ship-7', 0, 10);
    const last = decodeBundle(rows.at(-1)!.bytes);
    if (!last.ok) throw last.error;
    const ack = decodePayload('ack', last.value.payload);
    expect(ack.ok && ack.value.blobs).toEqual([sha256]);
  });

  it('materialises documents of agents from before packed entries exactly as packed ones', async () => {
    const h = await harness();
    const packed = await AgentSim.create('ship-7', 'a1', h.clock);
    const legacy = await AgentSim.create('ship-8', 'a1', h.clock, 1, { packed: false });
    for (const a of [packed, legacy]) {
      await h.enrol(a);
      a.plan('prod', 'net', 'drift', { cadenceS: 600, planHash: 'a'.repeat(64) });
      a.plan('prod', 'dns', 'failed');
      expect((await h.ingest.accept('relay-1', [await a.delta()])).map((r) => r.status)).toEqual(['stored']);
    }
    const rows = async (site: string) =>
      (await h.store.listCells()).filter((c) => c.site === site).map(({ site: _s, runId: _r, ...c }) => c);
    expect(await rows('ship-7')).toHaveLength(2);
    expect(await rows('ship-8')).toEqual(await rows('ship-7'));
    // One operation per run and per cell instead of one per field.
    const ops = (a: AgentSim) => A.getBackend(a.doc).stats().numOps;
    expect(ops(packed)).toBeLessThan(ops(legacy) / 2);
  });

  it('follows declared cadences across bundles that change them and bundles that do not', async () => {
    const h = await harness();
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    await h.enrol(a);
    const send = async () => {
      const heads = A.getHeads(a.doc);
      expect((await h.ingest.accept('relay-1', [await a.delta()])).map((r) => r.status)).toEqual(['stored']);
      a.acked = heads;
    };
    const interval = async (comp: string) =>
      (await h.store.getCell('ship-7', 'prod', comp))?.expectedIntervalS;
    a.plan('prod', 'net', 'clean', { cadenceS: 600 });
    await send();
    expect(await interval('net')).toBe(600);
    a.plan('prod', 'dns', 'clean', { cadenceS: 60 }); // cadences change: dns added
    await send();
    a.plan('prod', 'net', 'drift', { cadenceS: 600 }); // the cadences as they were: read from the memo
    await send();
    expect([await interval('net'), await interval('dns')]).toEqual([600, 60]);
    // A reload from stored chunks (no memo) reads the same.
    h.replicas.forget([a.docId]);
    a.plan('prod', 'dns', 'drift', { cadenceS: 60 });
    await send();
    expect([await interval('net'), await interval('dns')]).toEqual([600, 60]);
  });

  it('keeps one run row each when bundles arrive twice, reordered, or through two relays', async () => {
    const inOrder = await harness('memory');
    const shuffled = await harness('sqlite');
    const a = await AgentSim.create('ship-7', 'a1', inOrder.clock);
    await inOrder.enrol(a);
    await shuffled.enrol(a);
    const deltas: Uint8Array[] = [];
    for (const [i, comp] of ['net', 'dns', 'net', 'db', 'net'].entries()) {
      a.plan('prod', comp, i % 2 ? 'changes' : 'clean');
      const heads = A.getHeads(a.doc);
      deltas.push(await a.delta());
      a.acked = heads; // the next delta carries only what is new, so reordering leaves gaps
      inOrder.clock.advance(1000);
    }
    for (const d of deltas) await inOrder.ingest.accept('relay-1', [d]);

    const reversed = [...deltas].reverse();
    const r1 = await shuffled.ingest.accept('relay-1', [reversed[0]!, reversed[1]!, reversed[0]!]);
    expect(r1.map((r) => r.status)).toEqual(['stored', 'stored', 'duplicate']);
    expect(await runsOf(shuffled, 'prod', 'net')).toEqual([]); // changes wait for their dependencies
    await shuffled.ingest.accept('relay-2', reversed.slice(2));
    const again = await shuffled.ingest.accept('relay-2', deltas);
    expect(again.every((r) => r.status === 'duplicate')).toBe(true);

    expect(await runsOf(shuffled, 'prod', 'net')).toHaveLength(3);
    expect(await runsOf(shuffled, 'prod', 'net')).toEqual(await runsOf(inOrder, 'prod', 'net'));
    expect(await cellsOf(shuffled)).toEqual(await cellsOf(inOrder));
    expect(await cellsOf(shuffled)).toHaveLength(3);
  });

  it('converges after a restart and after compaction of stored chunks', async () => {
    const h = await harness('sqlite');
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    await h.enrol(a);
    for (let i = 0; i < 6; i++) {
      a.plan('prod', `c${i}`);
      const heads = A.getHeads(a.doc);
      await h.ingest.accept('direct', [await a.delta()]);
      a.acked = heads;
    }
    expect((await h.store.docChunks(a.docId)).length).toBeLessThan(6);
    h.restart();
    a.plan('prod', 'c0', 'failed');
    await h.ingest.accept('direct', [await a.delta({ from: [] })]);
    expect(await h.store.listCells()).toHaveLength(6);
    expect((await h.store.getCell('ship-7', 'prod', 'c0'))?.status).toBe('failed');
    expect(await runsOf(h, 'prod', 'c0')).toHaveLength(2);
  });

  it('stores each document compact: a whole save plus a few chunks, never a replay of its history', async () => {
    const h = await harness('sqlite');
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    await h.enrol(a);
    const counts: number[] = [];
    for (let i = 0; i < 20; i++) {
      a.plan('prod', `c${i % 5}`, i % 3 === 0 ? 'drift' : 'clean');
      const heads = A.getHeads(a.doc);
      expect((await h.ingest.accept('direct', [await a.delta()])).map((r) => r.status)).toEqual(['stored']);
      a.acked = heads;
      const chunks = await h.store.docChunks(a.docId);
      counts.push(chunks.length);
      // The first chunk is a whole document, and all of them load to exactly the agent's state.
      expect(A.getHeads(A.load(chunks[0] as Uint8Array)).length).toBe(1);
      const loaded = A.getBackend(A.init());
      for (const c of chunks) loaded.loadIncremental(c);
      expect(loaded.getHeads()).toEqual(A.getHeads(a.doc));
      loaded.free();
    }
    expect(Math.max(...counts)).toBeLessThanOrEqual(4); // the harness's maxChunks
    expect(counts).toContain(1); // compacted more than once
    expect(counts.lastIndexOf(1)).toBeGreaterThan(counts.indexOf(1));
  });

  it('merges in worker threads exactly as in its own thread, refusals included', async () => {
    const here = await harness('sqlite');
    const pooled = await makeHarness('sqlite', { mergeWorkers: 2 });
    open.push(pooled);
    const a = await AgentSim.create('ship-7', 'a1', here.clock);
    const b = await AgentSim.create('ship-7', 'b2', here.clock);
    const bundles: Uint8Array[][] = [];
    a.plan('prod', 'net', 'drift', { cadenceS: 600 });
    b.plan('prod', 'dns', 'clean', { cadenceS: 60 });
    bundles.push([await a.delta(), await b.delta()]);
    a.plan('prod', 'net', 'clean', { cadenceS: 600 });
    a.plan('prod', 'db', 'failed', { cadenceS: 300 });
    const forged = await b.delta({ doc: a.docId });
    bundles.push([await a.delta(), forged, await b.delta()]);
    for (const h of [here, pooled]) {
      await h.enrol(a);
      await h.enrol(b);
      for (const batch of bundles) await h.ingest.accept('relay-1', batch);
    }
    const state = async (h: Harness) => ({
      cells: (await h.store.listCells()).map(({ receivedAt: _r, ...c }) => c),
      chunks: await h.store.docChunks(a.docId),
      agents: (await h.store.listAgents()).map((x) => x.queueDepth),
    });
    expect(await state(pooled)).toEqual(await state(here));
    expect((await state(here)).cells).toHaveLength(3);
    expect(pooled.refused['agent-mismatch']).toBe(1);
  });

  describe('refuses, counts, stores nothing and answers with one signed rejection', () => {
    async function refusedCase(
      make: (h: Harness, a: AgentSim, b: AgentSim) => Promise<Uint8Array>,
      code: string,
    ) {
      const h = await harness();
      const a = await AgentSim.create('ship-7', 'a1', h.clock);
      const b = await AgentSim.create('ship-7', 'b2', h.clock);
      a.plan('prod', 'net');
      b.plan('prod', 'net', 'drift');
      const bytes = await make(h, a, b);
      const [r] = await h.ingest.accept('relay-1', [bytes]);
      expect(r).toMatchObject({ status: 'rejected', code });
      expect(await h.store.listCells()).toEqual([]);
      expect(await h.store.docChunks(a.docId)).toEqual([]);
      expect(await h.store.getSite('ship-7')).toBeNull();
      // The only thing stored: a rejection for the agent the header named, signed by the hub.
      const sender = decodeBundle(bytes);
      if (!sender.ok) throw sender.error;
      const [row, ...more] = await h.store.readDownlink('ship-7', 0, 10);
      expect(more).toEqual([]);
      const d = decodeBundle(row!.bytes);
      if (!d.ok) throw d.error;
      expect(await verifyBundle(d.value, h.hubKeys.publicKey)).toBe(true);
      expect(d.value.header).toMatchObject({ kind: 'control', source: 'hub' });
      expect(d.value.header.destination).toEqual(sender.value.header.source);
      const p = decodePayload('control', d.value.payload);
      if (!p.ok) throw p.error;
      expect(p.value).toMatchObject({ type: 'rejection', code, bundleIds: [r!.bundleId], count: 1 });
      return h;
    }

    it('an unenrolled agent', async () => {
      const h = await refusedCase(async (_h, a) => a.delta(), 'unknown-agent');
      expect(h.refused['unknown-agent']).toBe(1);
    });
    it('a revoked agent', async () => {
      await refusedCase(async (h, a) => {
        await h.enrol(a);
        const { revoke } = await import('../src/core/enrolment.js');
        await revoke(h.store, 'ship-7', 'a1', h.clock.now());
        return a.delta();
      }, 'revoked-agent');
    });
    it('a forged bundle (signed by another key)', async () => {
      const h = await refusedCase(async (h, a, b) => {
        await h.enrol(a);
        return a.delta({ signWith: b.keys.privateKey });
      }, 'bad-signature');
      expect(h.refused['bad-signature']).toBe(1);
    });
    it('an altered bundle (one byte of the payload changed)', async () => {
      await refusedCase(async (h, a) => {
        await h.enrol(a);
        const bytes = (await a.delta()).slice();
        const at = bytes.length - 64 - 10;
        bytes[at] = (bytes[at] as number) ^ 0xff;
        return bytes;
      }, 'bad-signature');
    });
    it("a bundle replayed from another agent (b2 sends a1's document)", async () => {
      const h = await refusedCase(async (h, a, b) => {
        await h.enrol(a);
        await h.enrol(b);
        return b.delta({ doc: a.docId });
      }, 'forbidden');
      expect(h.refused['agent-mismatch']).toBe(1);
    });
    it('a signed bundle whose changes are not intact Automerge changes', async () => {
      const h = await refusedCase(async (h, a) => {
        await h.enrol(a);
        const changes = A.saveSince(a.doc, []).slice() as Uint8Array<ArrayBuffer>;
        changes[changes.length - 2] = (changes[changes.length - 2] as number) ^ 0xff;
        return a.delta({ changes });
      }, 'bad-bundle');
      expect(h.refused['bad-bundle']).toBe(1);
    });
    it("an agent passing off another agent's changes as its own document", async () => {
      await refusedCase(async (h, a, b) => {
        await h.enrol(a);
        await h.enrol(b);
        const changes = A.saveSince(a.doc, []);
        b.doc = A.loadIncremental(A.init(), changes);
        return b.delta();
      }, 'forbidden');
    });
  });
});
