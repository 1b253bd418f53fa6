import * as A from '@automerge/automerge';
import { AgentDocSchema, plainAgentDoc } from '@driftline/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentLedger } from '../src/core/ledger/AgentLedger.js';
import { ackFor, hubApply, memoryLedger } from './agentStorageFixtures.js';
import { detail, runId, summary } from './helpers/storeFixtures.js';

/** The ledger's decisions (record, push, ack, prune, resend, bound) over memory storage. */
describe('AgentLedger', () => {
  it('records an identical plan as a small confirmation without storing a second blob', () => {
    const { ledger: s, storage } = memoryLedger();
    s.record({ runId: runId(), summary: summary(), detail: detail('ab') });
    const first = s.pending()[0]!;
    s.recordPush({
      bundleId: 'b1',
      epoch: 1,
      heads: first.heads,
      bytes: 1,
      upstream: 'u',
      receipt: 'stored',
      blobs: first.blobs.map((b) => b.sha256),
    });
    const r = s.record({
      runId: runId(),
      summary: summary({ finishedAt: '2030-01-01T00:00:00.000Z' }),
      detail: detail('ab'),
    });
    expect(r.unchanged).toBe(true);
    const delta = s.pending()[0]!;
    expect(delta.blobs).toEqual([]);
    expect(delta.changes.length).toBeLessThan(500);
    expect(storage.blobTotals(false).count).toBe(1);
  });

  it('writes an identical plan apart from its cell once an ack says the hub reads it (decision 330)', () => {
    const { ledger: s } = memoryLedger();
    const at = (h: number) => `2030-01-01T${String(h).padStart(2, '0')}:00:00.000Z`;
    s.record({ runId: runId(), summary: summary({ finishedAt: at(0) }) });
    const sizeOfNext = (h: number) => {
      const before = s.pending()[0]!;
      s.applyAck({ ...ackFor(1, before.heads, []), ...(h >= 2 ? { readsConfirmed: true as const } : {}) });
      expect(s.record({ runId: runId(), summary: summary({ finishedAt: at(h) }) }).unchanged).toBe(true);
      return s.pending()[0]!.changes.length;
    };
    // The hub has not said it reads the map: the cell is written again, as every hub reads it.
    const whole = sizeOfNext(1);
    const apart = sizeOfNext(2);
    expect(apart).toBeLessThan(whole - 150);
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1))));
    expect(Object.values(doc.cells)[0]).toMatchObject({ confirmations: 2, plannedAt: Date.parse(at(2)) });
  });

  it('prunes nothing on a relay receipt and acknowledges runs only on the hub ack (D4)', () => {
    const { ledger: s } = memoryLedger();
    s.record({ runId: runId(), summary: summary(), detail: detail('cd') });
    const d = s.pending()[0]!;
    s.recordPush({
      bundleId: 'b1',
      epoch: 1,
      heads: d.heads,
      bytes: d.changes.length,
      upstream: 'http://relay',
      receipt: 'stored',
      blobs: [],
    });
    expect(s.status().unackedRuns).toBe(1);
    expect(s.pending()).toHaveLength(1); // the blob announcement is still owed
    const r = s.applyAck(ackFor(1, d.heads, [detail('cd').sha256]));
    expect(r.runsAcked).toBe(1);
    expect(r.blobsDeleted).toBe(1);
    expect(s.status().unackedRuns).toBe(0);
    expect(s.pending()).toEqual([]);
    expect(s.status().bytesPending).toBe(0); // the acknowledged document is not "pending"
  });

  it('re-sends unreceipted changes, and only new changes after a receipt', () => {
    const { ledger: s } = memoryLedger();
    s.record({ runId: runId(), summary: summary({ component: 'a' }) });
    const d1 = s.pending()[0]!;
    s.recordPush({
      bundleId: 'b1',
      epoch: 1,
      heads: d1.heads,
      bytes: 1,
      upstream: 'u',
      receipt: null,
      blobs: [],
    });
    expect(s.pending()[0]!.changes).toEqual(d1.changes);
    s.recordPush({
      bundleId: 'b2',
      epoch: 1,
      heads: d1.heads,
      bytes: 1,
      upstream: 'u',
      receipt: 'stored',
      blobs: [],
    });
    s.record({ runId: runId(), summary: summary({ component: 'b' }) });
    const d2 = s.pending()[0]!;
    expect(d2.changes.length).toBeLessThan(d1.changes.length + 400);
    let hub = A.init<unknown>();
    hub = hubApply(hubApply(hub, d2.changes), d1.changes); // out of order: the hub waits for dependencies
    expect(A.getHeads(hub).sort()).toEqual([...d2.heads].sort());
  });

  it('re-sends what a relay receipted once resendAfterMs passes without a hub ack', () => {
    let t = 1_000_000;
    const { ledger: s } = memoryLedger({ resendAfterMs: 60_000, now: () => t });
    s.record({ runId: runId(), summary: summary() });
    const d = s.pending()[0]!;
    s.recordPush({
      bundleId: 'b1',
      epoch: 1,
      heads: d.heads,
      bytes: 1,
      upstream: 'u',
      receipt: 'stored',
      blobs: [],
    });
    expect(s.pending()).toEqual([]);
    t += 60_000;
    expect(s.pending()[0]?.changes).toEqual(d.changes);
  });

  it('pushes a delta holding an unacknowledged failure at failure priority', () => {
    const { ledger: s } = memoryLedger();
    s.record({ runId: runId(), summary: summary() });
    expect(s.pending()[0]?.hasFailure).toBe(false);
    s.record({
      runId: runId(),
      summary: summary({ component: 'db', status: 'failed', planHash: undefined }),
    });
    expect(s.pending()[0]?.hasFailure).toBe(true);
  });

  it('converges a hub replica whatever the order and duplication of deltas', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 3, maxLength: 12 }), (order) => {
        const { ledger: s } = memoryLedger();
        const deltas: Uint8Array[] = [];
        for (let i = 0; i < 6; i++) {
          s.record({
            runId: runId(),
            summary: summary({ component: `c${i % 3}`, planHash: String(i).repeat(64) as never }),
          });
          const d = s.pending()[0]!;
          deltas.push(d.changes);
          s.recordPush({
            bundleId: `b${i}`,
            epoch: 1,
            heads: d.heads,
            bytes: 1,
            upstream: 'u',
            receipt: 'stored',
            blobs: [],
          });
        }
        let hub = A.init<unknown>();
        for (const i of order) hub = hubApply(hub, deltas[i % deltas.length]!);
        for (const d of deltas) hub = hubApply(hub, d); // everything arrives eventually, some twice
        expect(A.getHeads(hub).sort()).toEqual(A.getHeads(s.loadEpoch(1)).sort());
        s.close();
      }),
      { numRuns: 15 },
    );
  });

  it('drops clean detail blobs first when over the queue bound, counts them, and keeps every result', () => {
    const { ledger: s, storage } = memoryLedger({ maxQueueBytes: 9000 });
    for (let i = 0; i < 30; i++) {
      s.record({
        runId: runId(),
        summary: summary({
          component: `c${i}`,
          status: i % 3 === 0 ? 'changes' : 'clean',
          planHash: (i % 10).toString(16).repeat(64) as never,
        }),
        detail: detail(`${i.toString(16)}f`, 500),
      });
    }
    const st = s.status();
    expect(st.boundInForce).toBe(true);
    expect(st.dropped.blobs).toBeGreaterThan(0);
    expect(st.unackedRuns).toBe(30);
    expect(storage.heldBlobs(['clean']).length).toBeLessThan(storage.heldBlobs(['changes']).length + 1);
  });

  it('counts consecutive locked results per cell', () => {
    const { ledger: s } = memoryLedger();
    s.record({ runId: runId(), summary: summary({ status: 'clean' }) });
    s.record({ runId: runId(), summary: summary({ status: 'locked', planHash: undefined }) });
    s.record({ runId: runId(), summary: summary({ status: 'locked', planHash: undefined }) });
    expect(s.lockedStreak('prod', 'network')).toBe(2);
    expect(s.lockedStreak('prod', 'other')).toBe(0);
  });

  it('reads the streak a stuck-lock run left, though that run is failed, not locked', () => {
    const { ledger: s } = memoryLedger();
    const lock = (status: 'locked' | 'failed', reason: string, lockedStreak: number) =>
      s.record({ runId: runId(), summary: summary({ status, reason, planHash: undefined }), lockedStreak });
    lock('locked', 'state-locked', 1);
    lock('locked', 'state-locked', 2);
    lock('failed', 'stuck-lock', 3);
    expect(s.lockedStreak('prod', 'network')).toBe(3);
    s.record({ runId: runId(), summary: summary({ status: 'clean' }) });
    expect(s.lockedStreak('prod', 'network')).toBe(0);
  });

  it('publishes facts once without a run, and writes nothing when they have not changed', () => {
    const { ledger: s } = memoryLedger();
    const facts = { version: '0.1.0', cadenceS: { 'prod/network': 900 }, contactIntervalS: 1830 };
    expect(s.updateFacts(facts)).toBe(true);
    const after = s.pending()[0]!;
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1))));
    expect(doc.facts?.cadenceS).toEqual({ 'prod/network': 900 });
    s.recordPush({
      bundleId: 'b',
      epoch: 1,
      heads: after.heads,
      bytes: 1,
      upstream: 'u',
      receipt: 'stored',
      blobs: [],
    });
    expect(s.updateFacts(facts)).toBe(false);
    expect(s.pending()).toEqual([]);
  });
});

describe('the document, opened at its first use', () => {
  const facts = { version: '0.1.0', cadenceS: { 'prod/network': 900 }, contactIntervalS: 1830 };

  it('writes nothing on a fresh store until there is something to write; facts given before wait for it', () => {
    const { ledger: s, storage } = memoryLedger();
    expect(s.updateFacts(facts)).toBe(true);
    expect(s.status()).toMatchObject({ epoch: 1, unackedRuns: 0, docBytes: 0 });
    expect(s.documentOpen()).toBe(false);
    expect(storage.latestEpoch()).toBeNull();
    const id = runId();
    s.record({ runId: id, summary: summary() });
    expect(s.documentOpen()).toBe(true);
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1))));
    expect(doc.facts?.cadenceS).toEqual({ 'prod/network': 900 });
    expect(Object.keys(doc.runs)).toEqual([id]);
  });

  it('loads a stored document only when it is read, and sends facts given before it with the next push', () => {
    const { ledger: first, storage } = memoryLedger();
    first.record({ runId: runId(), summary: summary() });
    const sent = first.pending()[0]!;
    first.recordPush({
      bundleId: 'b',
      epoch: 1,
      heads: sent.heads,
      bytes: 1,
      upstream: 'u',
      receipt: 'stored',
      blobs: [],
    });
    const s = new AgentLedger(storage, { site: 'ship-7', agent: 'a1' });
    expect(s.stats().docsLoaded).toBe(0);
    expect(s.updateFacts(facts)).toBe(true);
    expect(s.documentOpen()).toBe(false);
    const [delta] = s.pending();
    expect(s.documentOpen()).toBe(true);
    expect(s.stats().docsLoaded).toBe(1);
    const replica = hubApply(A.load(A.save(first.loadEpoch(1))), delta!.changes);
    expect((A.toJS(replica) as { facts?: { cadenceS?: unknown } }).facts?.cadenceS).toEqual({
      'prod/network': 900,
    });
  });
});

describe('recording results that finish together', () => {
  const inputs = (n: number, offset = 0) =>
    Array.from({ length: n }, (_, i) => ({
      runId: runId(),
      summary: summary({
        component: `c${(i + offset) % 200}`,
        planHash: (i + offset).toString(16).padStart(64, '0') as never,
      }),
      detail: detail(`d${i + offset}x`),
    }));

  it('records nothing of a batch that fails, and goes on recording from what was committed', () => {
    const { ledger: s } = memoryLedger();
    s.recordMany(inputs(3));
    const dup = inputs(3, 10);
    dup[2] = { ...dup[2]!, runId: dup[0]!.runId }; // the storage refuses the second row
    expect(() => s.recordMany(dup)).toThrow();
    expect(s.status().unackedRuns).toBe(3);
    expect(s.stats().docsHeld).toBe(1);
    s.recordMany(inputs(2, 20));
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1))));
    expect(Object.keys(doc.runs)).toHaveLength(5);
    expect(doc.runs[dup[0]!.runId]).toBeUndefined();
  });

  it('packs a detail given as a function only when it is stored (never for an unchanged plan)', () => {
    const { ledger: s } = memoryLedger();
    let packed = 0;
    const lazy = (seed: string) => () => {
      packed++;
      return detail(seed);
    };
    s.record({ runId: runId(), summary: summary(), detail: lazy('ab') });
    expect(packed).toBe(1);
    const r = s.record({ runId: runId(), summary: summary(), detail: lazy('ab') });
    expect(r.unchanged).toBe(true);
    expect(packed).toBe(1);
  });
});
