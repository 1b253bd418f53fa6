import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as A from '@automerge/automerge';
import { AgentDocSchema, plainAgentDoc } from '@driftline/protocol';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreOpenError } from '../src/adapters/sqlite/openDatabase.js';
import { SqliteAgentStore } from '../src/adapters/sqlite/SqliteAgentStore.js';
import { detail, runId, summary, tempDir } from './helpers/storeFixtures.js';

const open: SqliteAgentStore[] = [];
function store(dir = tempDir(), over: Partial<ConstructorParameters<typeof SqliteAgentStore>[0]> = {}) {
  const s = new SqliteAgentStore({ path: join(dir, 'agent.sqlite'), site: 'ship-7', agent: 'a1', ...over });
  open.push(s);
  return s;
}
afterEach(() => {
  for (const s of open.splice(0)) {
    try {
      s.close();
    } catch {}
  }
});

/** What a hub does with deltas: apply to a replica, in any order, any number of times. */
function hubApply(replica: A.Doc<unknown>, changes: Uint8Array): A.Doc<unknown> {
  return A.loadIncremental(replica, changes);
}
function ackFor(epoch: number, heads: string[], blobs: string[] = []) {
  return { agent: 'a1', doc: `ship-7/a1/epoch-${epoch}`, heads, blobs, committedAt: 0 } as never;
}

describe('SqliteAgentStore', () => {
  it('keeps every recorded run across a reopen, with the document rebuilt from its chunks', () => {
    const dir = tempDir();
    const s = store(dir);
    const ids = [runId(), runId(), runId()];
    for (const [i, id] of ids.entries())
      s.record({
        runId: id,
        summary: summary({ component: `c${i}`, planHash: String(i).repeat(64) as never }),
      });
    s.close();
    const again = store(dir);
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(again.loadEpoch(1))));
    expect(Object.keys(doc.runs).sort()).toEqual([...ids].sort());
    expect(again.status().unackedRuns).toBe(3);
  });

  it('records an identical plan as a small confirmation without storing a second blob', () => {
    const s = store();
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
    expect((s.db.prepare('SELECT count(*) AS n FROM blobs').get() as { n: number }).n).toBe(1);
  });

  it('prunes nothing on a relay receipt and acknowledges runs only on the hub ack (D4)', () => {
    const s = store();
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
    const s = store();
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

  it('seals an epoch past its size, seeds the next with the latest cells, and prunes the sealed one once fully acked', () => {
    const s = store(tempDir(), { maxDocBytes: 2000 });
    let sealedAt = 0;
    let recorded = 0;
    for (let i = 0; i < 40 && !sealedAt; i++) {
      const r = s.record({
        runId: runId(),
        summary: summary({ component: `c${i}`, planHash: (i % 10).toString().repeat(64) as never }),
      });
      recorded++;
      if (r.sealed) sealedAt = r.epoch;
    }
    expect(sealedAt).toBe(2);
    const [e1, e2] = s.pending();
    expect(e1!.sealed).toBe(true);
    const seeded = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(2))));
    expect(Object.keys(seeded.cells)).toHaveLength(recorded);
    const r = s.applyAck(ackFor(1, e1!.heads));
    expect(r.epochsPruned).toEqual([1]);
    expect(s.pending().map((p) => p.epoch)).toEqual([e2!.epoch]);
    expect(() => s.loadEpoch(1)).toThrow(StoreOpenError);
  });

  it('converges a hub replica whatever the order and duplication of deltas', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 3, maxLength: 12 }), (order) => {
        const s = store();
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
    const s = store(tempDir(), { maxQueueBytes: 9000 });
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
    const kept = s.db
      .prepare("SELECT count(*) AS n FROM blobs WHERE status = 'changes' AND data IS NOT NULL")
      .get() as { n: number };
    const cleanKept = s.db
      .prepare("SELECT count(*) AS n FROM blobs WHERE status = 'clean' AND data IS NOT NULL")
      .get() as { n: number };
    expect(cleanKept.n).toBeLessThan(kept.n + 1);
  });

  it('refuses a corrupt store file with a message that says what to do, and a store of another agent', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agent.sqlite'), 'this is not sqlite '.repeat(100));
    expect(() => store(dir)).toThrow(/corrupt or not a Driftline store; move it aside/);
    const other = tempDir();
    store(other).close();
    expect(
      () => new SqliteAgentStore({ path: join(other, 'agent.sqlite'), site: 'ship-8', agent: 'a1' }),
    ).toThrow(/belongs to ship-7\/a1/);
  });

  it('counts consecutive locked results per cell', () => {
    const s = store();
    s.record({ runId: runId(), summary: summary({ status: 'clean' }) });
    s.record({ runId: runId(), summary: summary({ status: 'locked', planHash: undefined }) });
    s.record({ runId: runId(), summary: summary({ status: 'locked', planHash: undefined }) });
    expect(s.lockedStreak('prod', 'network')).toBe(2);
    expect(s.lockedStreak('prod', 'other')).toBe(0);
  });
});

describe('agent facts at start-up', () => {
  it('publishes facts once without a run, and writes nothing when they have not changed', () => {
    const s = store();
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

describe('epoch length', () => {
  it('seals an epoch after maxDocChanges changes even when it is small in bytes, so loading stays cheap', () => {
    const s = store(tempDir(), { maxDocChanges: 100, maxDocBytes: 1 << 30 });
    let sealedAfter = 0;
    for (let i = 1; i <= 150 && !sealedAfter; i++) {
      if (
        s.record({
          runId: runId(),
          summary: summary({ component: `c${i % 4}`, planHash: i.toString(16).padStart(64, '0') as never }),
        }).sealed
      )
        sealedAfter = i;
    }
    expect(sealedAfter).toBe(100);
    expect(s.status().epoch).toBe(2);
    expect(s.pending()[0]?.sealed).toBe(true);
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
  const chunks = (s: SqliteAgentStore, epoch: number) =>
    (s.db.prepare('SELECT count(*) AS n FROM chunks WHERE epoch = ?').get(epoch) as { n: number }).n;

  it('records a batch in one transaction and one document change, and keeps all of it across a reopen', () => {
    const dir = tempDir();
    const s = store(dir);
    const commits = s.stats().commits;
    const chunksBefore = chunks(s, 1);
    const changesBefore = A.getBackend(s.loadEpoch(1)).stats().numChanges;
    const batch = inputs(200);
    const results = s.recordMany(batch);
    expect(results).toHaveLength(200);
    expect(s.stats().commits - commits).toBe(1);
    expect(chunks(s, 1) - chunksBefore).toBe(1);
    s.close();
    const again = store(dir);
    const doc = again.loadEpoch(1);
    expect(A.getBackend(doc).stats().numChanges - changesBefore).toBe(1);
    const plain = AgentDocSchema.parse(plainAgentDoc(A.toJS(doc)));
    expect(Object.keys(plain.runs).sort()).toEqual(batch.map((b) => b.runId).sort());
    expect(again.status().unackedRuns).toBe(200);
    expect(again.status().blobsPending).toBe(200);
  });

  it('records nothing of a batch that fails, and goes on recording from what was committed', () => {
    const s = store();
    s.recordMany(inputs(3));
    const dup = inputs(3, 10);
    dup[2] = { ...dup[2]!, runId: dup[0]!.runId }; // the runs table refuses the second row
    expect(() => s.recordMany(dup)).toThrow();
    expect(s.status().unackedRuns).toBe(3);
    expect(s.stats().docsHeld).toBe(1);
    s.recordMany(inputs(2, 20));
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(s.loadEpoch(1))));
    expect(Object.keys(doc.runs)).toHaveLength(5);
    expect(doc.runs[dup[0]!.runId]).toBeUndefined();
  });

  it('packs a detail given as a function only when it is stored (never for an unchanged plan)', () => {
    const s = store();
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

describe('memory and load cost of many epochs', () => {
  it('holds only the current epoch document after pending, status and acks read sealed ones', () => {
    const s = store(tempDir(), { maxDocChanges: 100, maxDocBytes: 1 << 30 });
    let n = 0;
    while (s.status().epoch < 4) {
      s.recordMany(
        Array.from({ length: 20 }, () => ({
          runId: runId(),
          summary: summary({
            component: `c${n % 7}`,
            planHash: (n++).toString(16).padStart(64, '0') as never,
          }),
        })),
      );
    }
    const pending = s.pending();
    expect(pending.filter((p) => p.sealed)).toHaveLength(3);
    s.status();
    s.applyAck(ackFor(1, pending[0]!.heads));
    expect(s.stats().docsLoaded).toBeGreaterThanOrEqual(6);
    expect(s.stats().docsHeld).toBe(1);
  });

  it('answers status without loading a sealed epoch again while its unacknowledged heads stay the same', () => {
    const s = store(tempDir(), { maxDocChanges: 100, maxDocBytes: 1 << 30 });
    for (let i = 0; i < 6; i++)
      s.recordMany(
        Array.from({ length: 40 }, (_, j) => ({
          runId: runId(),
          summary: summary({
            component: `c${j}`,
            planHash: (i * 100 + j).toString(16).padStart(64, '0') as never,
          }),
        })),
      );
    const first = s.status();
    const loaded = s.stats().docsLoaded;
    const second = s.status();
    expect(second.bytesPending).toBe(first.bytesPending);
    expect(s.stats().docsLoaded).toBe(loaded);
  });

  it('counts recorded entries, not batches, toward maxDocChanges: a batch of 100 seals like 100 records', () => {
    const s = store(tempDir(), { maxDocChanges: 100, maxDocBytes: 1 << 30 });
    const r = s.recordMany(
      Array.from({ length: 100 }, (_, i) => ({
        runId: runId(),
        summary: summary({ component: `c${i}`, planHash: i.toString(16).padStart(64, '0') as never }),
      })),
    );
    expect(r.at(-1)?.sealed).toBe(true);
    expect(s.status().epoch).toBe(2);
  });

  it('keeps an epoch at one snapshot plus at most compactAfterChunks chunks, the snapshot first', () => {
    const s = store(tempDir(), { compactAfterChunks: 4 });
    for (let i = 0; i < 23; i++)
      s.record({ runId: runId(), summary: summary({ planHash: i.toString(16).padStart(64, '0') as never }) });
    const rows = s.db.prepare('SELECT data FROM chunks WHERE epoch = 1 ORDER BY id').all() as Array<{
      data: Buffer;
    }>;
    expect(rows.length).toBeLessThanOrEqual(5);
    // The first chunk alone is a whole document: loading starts from it.
    expect(Object.keys(A.toJS(A.load(rows[0]!.data)) as object)).toContain('runs');
  });
});

describe('memory bounds', () => {
  it('bounds its SQLite page cache (better-sqlite3 defaults to 16 MB per connection)', () => {
    expect(store().db.pragma('cache_size', { simple: true })).toBe(-4096);
    expect(store(tempDir(), { cacheKiB: 1024 }).db.pragma('cache_size', { simple: true })).toBe(-1024);
  });
});
