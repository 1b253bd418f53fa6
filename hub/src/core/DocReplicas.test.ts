import * as A from '@automerge/automerge';
import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../adapters/memory/MemoryHubStore.js';
import { DocReplicas } from './DocReplicas.js';

const docId = 's/a1/epoch-1';
const chunk = (bytes: Uint8Array, whole = false) => ({
  docId,
  site: 's',
  agent: 'a1',
  epoch: 1,
  bytes,
  whole,
});

describe('DocReplicas', () => {
  it('opens the stored state, holds nothing once closed, and says when to store the document whole', async () => {
    const store = new MemoryHubStore();
    const replicas = new DocReplicas(store, { maxChunks: 3, maxGrowth: 0.5 });
    let doc = A.change(A.init<{ runs: Record<string, string> }>(), (d) => {
      d.runs = { r0: Array.from({ length: 80 }, (_, i) => (i * 7919).toString(36)).join(' ') };
    });
    await store.commit({ docChunks: [chunk(A.save(doc), true)] });
    const base = A.save(doc).length;

    const heads = A.getHeads(doc);
    doc = A.change(doc, (d) => {
      d.runs.r1 = 'small';
    });
    const delta = A.saveSince(doc, heads);
    const r = await replicas.open(docId);
    expect(r.stored).toEqual({ chunks: 1, baseBytes: base, restBytes: 0 });
    expect(replicas.size().open).toBe(1);
    r.handle.loadIncremental(delta);
    expect(r.handle.getHeads()).toEqual(A.getHeads(doc));
    // A small change is appended; one as large as half the saved document is not.
    expect(replicas.storeWhole(r, { chunks: 1, bytes: delta.length })).toBe(false);
    expect(replicas.storeWhole(r, { chunks: 1, bytes: Math.ceil(base / 2) + 1 })).toBe(true);
    // Past `maxChunks` stored chunks, the document is stored whole whatever the sizes.
    expect(replicas.storeWhole(r, { chunks: 3, bytes: 3 })).toBe(true);
    replicas.close(r);
    expect(replicas.size().open).toBe(0);

    // Changes waiting for a missing dependency are never folded into a save (it would drop them).
    const h2 = A.getHeads(doc);
    doc = A.change(doc, (d) => {
      d.runs.r2 = 'later';
    });
    const orphan = A.saveSince(doc, h2);
    const r2 = await replicas.open(docId);
    r2.handle.loadIncremental(orphan);
    expect(r2.handle.getMissingDeps([]).length).toBeGreaterThan(0);
    expect(replicas.storeWhole(r2, { chunks: 5, bytes: 10_000 })).toBe(false);
    replicas.close(r2);
    expect(await replicas.heads(docId)).toEqual(heads);
  });

  it('keeps readers\u2019 memos between batches, least recently used first out', async () => {
    const replicas = new DocReplicas(new MemoryHubStore(), { maxMemos: 2 });
    for (const id of ['a', 'b', 'a', 'c']) {
      const r = await replicas.open(id);
      r.memo.set('seen', (Number(r.memo.get('seen') ?? 0) + 1) as never);
      replicas.close(r);
    }
    expect(replicas.size().memos).toBe(2);
    const a = await replicas.open('a');
    expect(a.memo.get('seen')).toBe(2);
    replicas.close(a);
    const b = await replicas.open('b');
    expect(b.memo.get('seen')).toBeUndefined();
    replicas.close(b);
  });
});
