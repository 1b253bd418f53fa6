import * as A from '@automerge/automerge';
import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../adapters/memory/MemoryHubStore.js';
import { DocReplicas } from './DocReplicas.js';
import { type MergeInput, mergeDoc, type Segment } from './mergeDoc.js';
import { SegmentEntries } from './segmentEntries.js';

type Doc = { site: string; agent: string; runs: Record<string, string> };
const text = (n: number) => Array.from({ length: n }, (_, i) => (i * 7919).toString(36)).join(' ');
const start = () =>
  A.change(A.init<Doc>(), (d) => {
    d.site = 's';
    d.agent = 'a1';
    d.runs = { r0: new A.ImmutableString(text(80)) as never };
  });
const job = (stored: Uint8Array[], changes: Uint8Array[], over: Partial<MergeInput> = {}): MergeInput => ({
  docId: 's/a1/epoch-1',
  site: 's',
  agent: 'a1',
  stored,
  changes,
  cadenceKnown: false,
  maxChunks: 3,
  maxGrowth: 0.5,
  ...over,
});
/** A segment's run keys, sorted (null: no segment). */
const runKeys = (s: Segment | null) => (s ? new SegmentEntries(s, new Map()).keys('runs').sort() : null);
const put = (doc: A.Doc<Doc>, key: string, value: string) => {
  const heads = A.getHeads(doc);
  const next = A.change(doc, (d) => {
    d.runs[key] = new A.ImmutableString(value) as never;
  });
  return { next, delta: A.saveSince(next, heads) };
};

/** The same chunk with a byte of its data changed: its checksum no longer matches. */
const corrupt = (b: Uint8Array) => {
  const c = b.slice();
  c[c.length - 2] = (c[c.length - 2] as number) ^ 0xff;
  return c;
};

describe('mergeDoc', () => {
  it('appends small changes and stores the document whole once its chunks grow', () => {
    const doc = start();
    const base = A.save(doc);
    const small = put(doc, '01JX00000000000000000000R1', 'small');
    const out = mergeDoc(job([base], [small.delta]));
    expect(out.items).toEqual([{ ok: true, changed: true }]);
    expect(out.whole).toBeNull();
    expect(out.heads).toEqual(A.getHeads(small.next));
    expect(
      new SegmentEntries(out.segments[0] as Segment, new Map()).entry('runs', '01JX00000000000000000000R1'),
    ).toBe('small');

    const large = put(small.next, '01JX00000000000000000000R2', text(200));
    const grown = mergeDoc(job([base, small.delta], [large.delta]));
    expect(grown.whole).not.toBeNull();
    expect(A.getHeads(A.load(grown.whole as Uint8Array))).toEqual(A.getHeads(large.next));
    // Past `maxChunks` stored chunks the document is stored whole, whatever the sizes.
    const tiny = put(A.clone(small.next), '01JX00000000000000000000R3', 'x');
    expect(mergeDoc(job([base, small.delta, base], [tiny.delta])).whole).not.toBeNull();
    // The same changes again change nothing and store nothing.
    expect(mergeDoc(job([base, small.delta], [small.delta])).items).toEqual([{ ok: true, changed: false }]);
  });

  it('hands packed entries on as their text, parsed once when read', () => {
    const doc = start();
    const base = A.save(doc);
    const entry = put(
      doc,
      '01JX00000000000000000000R1',
      JSON.stringify({ runId: '01JX00000000000000000000R1', n: 1 }),
    );
    const seg = mergeDoc(job([base], [entry.delta])).segments[0] as Segment;
    // Text crosses from a merge worker for the price of a copy; parsed objects would be cloned field by field.
    expect(seg.runs).toEqual({});
    expect(seg.packed.runs.get('01JX00000000000000000000R1')).toBe(
      '{"runId":"01JX00000000000000000000R1","n":1}',
    );
    const read = new SegmentEntries(seg, new Map());
    expect(read.entry('runs', '01JX00000000000000000000R1')).toEqual({
      runId: '01JX00000000000000000000R1',
      n: 1,
    });
    expect(read.entry('runs', '01JX00000000000000000000R1')).toBe(
      read.entry('runs', '01JX00000000000000000000R1'),
    );
  });

  it('never folds changes that wait for a missing dependency into a save, and keeps them', () => {
    const doc = start();
    const base = A.save(doc); // before the changes below: saving an outdated document saves the latest
    const one = put(doc, '01JX00000000000000000000R1', text(300));
    const two = put(one.next, '01JX00000000000000000000R2', text(300));
    const out = mergeDoc(job([base], [two.delta], { maxChunks: 1, maxGrowth: 0 }));
    expect(out.items).toEqual([{ ok: true, changed: true }]);
    expect(out.whole).toBeNull();
    expect(out.heads).toEqual(A.getHeads(doc));
  });

  it('refuses changes that are not Automerge changes, or say they are another agent’s, and keeps the rest', () => {
    const doc = start();
    const base = A.save(doc);
    const good = put(doc, '01JX00000000000000000000R1', 'good');
    const other = A.change(A.clone(good.next), (d) => {
      d.agent = 'b2';
    });
    const forged = A.saveSince(other, A.getHeads(good.next));
    const after = put(good.next, '01JX00000000000000000000R3', 'after');
    const out = mergeDoc(
      job([base], [good.delta, Uint8Array.of(1, 2, 3, 4), corrupt(good.delta), forged, after.delta], {
        maxChunks: 10,
      }),
    );
    expect(out.items.map((i) => (i.ok ? 'ok' : i.reason))).toEqual([
      'ok',
      'bad-changes',
      'bad-changes',
      'agent-mismatch',
      'ok',
    ]);
    // One segment before each refusal (what came before it), one for the end.
    expect(out.segments.map(runKeys)).toEqual([
      ['01JX00000000000000000000R1'],
      null,
      null,
      ['01JX00000000000000000000R3'],
    ]);
    expect(out.heads).toEqual(A.getHeads(after.next));
  });

  it('reads each segment’s own changes, also when a malformed bundle splits them', () => {
    const doc = start();
    const base = A.save(doc);
    const one = put(doc, '01JX00000000000000000000R1', 'one');
    const two = put(one.next, '01JX00000000000000000000R2', 'two');
    const three = put(two.next, '01JX00000000000000000000R3', 'three');
    const out = mergeDoc(
      job([base], [one.delta, two.delta, Uint8Array.of(1), three.delta], { maxChunks: 10 }),
    );
    expect(out.segments.map(runKeys)).toEqual([
      ['01JX00000000000000000000R1', '01JX00000000000000000000R2'],
      ['01JX00000000000000000000R3'],
    ]);
    // Nothing refused: one segment, the whole merge.
    const all = mergeDoc(job([base], [one.delta, two.delta, three.delta], { maxChunks: 10 }));
    expect(all.segments.map(runKeys)).toEqual([
      ['01JX00000000000000000000R1', '01JX00000000000000000000R2', '01JX00000000000000000000R3'],
    ]);
  });
});

describe('DocReplicas', () => {
  it('keeps readers’ memos between batches, least recently used first out', async () => {
    const replicas = new DocReplicas(new MemoryHubStore(), { maxMemos: 2 });
    const seen = async (id: string) => {
      const { memo } = await replicas.merge(id, 's', 'a1', []);
      const n = Number(memo.get('seen') ?? 0) + 1;
      memo.set('seen', n);
      return n;
    };
    for (const id of ['a', 'b', 'a', 'c']) await seen(id);
    expect(replicas.size().memos).toBe(2);
    expect(await seen('a')).toBe(3);
    expect(await seen('b')).toBe(1); // dropped: least recently used
  });
});
