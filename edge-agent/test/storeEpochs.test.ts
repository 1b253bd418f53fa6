import * as A from '@automerge/automerge';
import { AgentDocSchema, plainAgentDoc } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { StoreOpenError } from '../src/ports/AgentStorage.js';
import { ackFor, memoryLedger } from './agentStorageFixtures.js';
import { runId, summary } from './helpers/storeFixtures.js';

/** Epochs (C1): when the ledger seals, compacts and prunes them, and what that costs in documents loaded. */
describe('epochs', () => {
  it('seals an epoch past its size, seeds the next with the latest cells, and prunes the sealed one once fully acked', () => {
    const { ledger: s } = memoryLedger({ maxDocBytes: 2000 });
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

  it('keeps a sealed epoch the hub holds only in part, and ignores heads it never wrote', () => {
    const { ledger: s } = memoryLedger({ maxDocChanges: 3, maxDocBytes: 1 << 30 });
    s.record({ runId: runId(), summary: summary({ component: 'a' }) });
    const partial = s.pending()[0]!.heads;
    for (const c of ['b', 'c']) s.record({ runId: runId(), summary: summary({ component: c }) });
    expect(s.applyAck(ackFor(1, ['f'.repeat(64)]))).toMatchObject({ runsAcked: 0, epochsPruned: [] });
    expect(s.applyAck(ackFor(1, partial))).toMatchObject({ runsAcked: 1, epochsPruned: [] });
    expect(s.status().unackedRuns).toBe(2);
  });

  it('seals an epoch after maxDocChanges changes even when it is small in bytes, so loading stays cheap', () => {
    const { ledger: s } = memoryLedger({ maxDocChanges: 100, maxDocBytes: 1 << 30 });
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

  it('counts recorded entries, not batches, toward maxDocChanges: a batch of 100 seals like 100 records', () => {
    const { ledger: s } = memoryLedger({ maxDocChanges: 100, maxDocBytes: 1 << 30 });
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
    const { ledger: s, storage } = memoryLedger({ compactAfterChunks: 4 });
    for (let i = 0; i < 23; i++)
      s.record({ runId: runId(), summary: summary({ planHash: i.toString(16).padStart(64, '0') as never }) });
    const chunks = storage.chunks(1);
    expect(chunks.length).toBeLessThanOrEqual(5);
    // The first chunk alone is a whole document: loading starts from it.
    expect(Object.keys(A.toJS(A.load(chunks[0]!)) as object)).toContain('runs');
  });
});

describe('memory and load cost of many epochs', () => {
  it('holds only the current epoch document after pending, status and acks read sealed ones', () => {
    const { ledger: s } = memoryLedger({ maxDocChanges: 100, maxDocBytes: 1 << 30 });
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
    const { ledger: s } = memoryLedger({ maxDocChanges: 100, maxDocBytes: 1 << 30 });
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
});
