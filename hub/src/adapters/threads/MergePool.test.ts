import * as A from '@automerge/automerge';
import { afterEach, describe, expect, it } from 'vitest';
import { inThread } from '../../core/inThread.js';
import type { MergeInput } from '../../core/mergeDoc.js';
import { MergePool } from './MergePool.js';

type Doc = { site: string; agent: string; runs: Record<string, string> };
const text = (n: number) => Array.from({ length: n }, (_, i) => (i * 7919).toString(36)).join(' ');
const start = () =>
  A.change(A.init<Doc>(), (d) => {
    d.site = 's';
    d.agent = 'a1';
    d.runs = { r0: new A.ImmutableString(text(80)) as never };
  });
const job = (stored: Uint8Array[], changes: Uint8Array[]): MergeInput => ({
  docId: 's/a1/epoch-1',
  site: 's',
  agent: 'a1',
  stored,
  changes,
  cadenceKnown: false,
  maxChunks: 3,
  maxGrowth: 0.5,
});
const put = (doc: A.Doc<Doc>, key: string, value: string) => {
  const heads = A.getHeads(doc);
  const next = A.change(doc, (d) => {
    d.runs[key] = new A.ImmutableString(value) as never;
  });
  return { next, delta: A.saveSince(next, heads) };
};

describe('MergePool', () => {
  const pools: MergePool[] = [];
  afterEach(async () => {
    for (const p of pools.splice(0)) await p.close();
  });

  it('merges in worker threads exactly as in this thread, and replaces a worker that dies', async () => {
    const pool = new MergePool(2);
    pools.push(pool);
    const doc = start();
    const one = put(doc, 'r1', text(300));
    const input = job([A.save(doc)], [one.delta]);
    const expected = await inThread.merge(input);
    // Two at once: one for each worker.
    expect(await Promise.all([pool.merge(input), pool.merge(input)])).toEqual([expected, expected]);
    // A worker whose Automerge module died takes its jobs with it; the pool starts another.
    const slots = (pool as unknown as { slots: { worker: { terminate(): Promise<number> } }[] }).slots;
    await slots[0]?.worker.terminate();
    await slots[1]?.worker.terminate();
    expect(await pool.merge(input)).toEqual(expected);
  });

  it("answers each worker's own memory, its Automerge heap included, beside its merges", async () => {
    const pool = new MergePool(2);
    pools.push(pool);
    const doc = start();
    const input = job([A.save(doc)], [put(doc, 'r1', text(300)).delta]);
    const [merged, memory] = await Promise.all([pool.merge(input), pool.memory()]);
    expect(merged.heads).toHaveLength(1);
    expect(memory).toHaveLength(2);
    for (const m of memory) {
      expect(m.heapUsed).toBeGreaterThan(0);
      expect(m.heapTotal).toBeGreaterThanOrEqual(m.heapUsed);
      // Automerge's WebAssembly memory, measured in the worker (a page at least).
      expect(m.wasm).toBeGreaterThanOrEqual(65_536);
    }
  });
});
