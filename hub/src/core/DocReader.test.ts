import * as A from '@automerge/automerge';
import { packDocEntry } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { DocReader, type Touched } from './DocReader.js';

const S = (s: string) => new A.ImmutableString(s);

/** The oracle: what changed, classified from a whole-document diff's patches. */
function touched(patches: readonly A.Patch[]): Touched {
  const runs = new Set<string>();
  const cells = new Set<string>();
  let facts = false;
  let cadence = false;
  let publications = false;
  let applies = false;
  let requests = false;
  for (const p of patches) {
    const [top, key] = p.path;
    if (top === 'bundles') publications = true;
    else if (top === 'applies') applies = true;
    else if (top === 'requests') requests = true;
    else if (top === 'runs' && typeof key === 'string') runs.add(key);
    else if ((top === 'cells' || top === 'confirmed') && typeof key === 'string') cells.add(key);
    else if (top === 'facts') {
      facts = true;
      if (key === undefined || key === 'cadenceS') cadence = true;
    }
  }
  return { runs, cells, facts, cadence, publications, applies, requests, refused: [] };
}

/** Run ids: the document's `runs` are keyed by them (decision 570). */
const R1 = '01JX00000000000000000000R1';
const R2 = '01JX00000000000000000000R2';

/** An agent-shaped document written the way the agent writes it. */
function agentDoc(): A.Doc<Record<string, unknown>> {
  return A.change(A.init<Record<string, unknown>>(), (d) => {
    d.site = S('s1');
    d.agent = S('a1');
    d.epoch = 1;
    d.cells = {};
    d.runs = {};
  });
}

describe('DocReader', () => {
  it('names the same changed runs, cells and facts as a whole-document diff', () => {
    let doc = agentDoc();
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    const steps: ((d: any) => void)[] = [
      (d) => {
        d.runs[R1] = { runId: S(R1), environment: S('prod'), component: S('c1') };
        d.cells['prod/c1'] = { runId: S(R1), plannedAt: 1, confirmations: 0 };
        d.facts = { version: S('1'), cadenceS: { 'prod/c1': 60 } };
      },
      (d) => {
        // an unchanged confirmation: only fields inside the cell move
        d.cells['prod/c1'].plannedAt = 2;
        d.cells['prod/c1'].confirmations = 1;
      },
      (d) => {
        d.facts.cadenceS['prod/c2'] = 30;
      },
      (d) => {
        d.facts.version = S('2');
      },
      (d) => {
        d.runs[R2] = { runId: S(R2), environment: S('prod'), component: S('c2') };
        d.cells['prod/c2'] = { runId: S(R2), plannedAt: 3, confirmations: 0 };
      },
      (d) => {
        d.bundles = { b1: { state: S('sent') } };
      },
      (d) => {
        d.applies = { r1: { runId: S('r1'), state: S('applying') } };
      },
    ];
    for (const step of steps) {
      const before = A.getHeads(doc);
      doc = A.change(doc, step);
      const after = A.getHeads(doc);
      const expected = touched(A.diff(doc, before, after));
      expect(new DocReader(A.getBackend(doc)).touched(before, after)).toEqual(expected);
    }
    const all = new DocReader(A.getBackend(doc)).touched([], A.getHeads(doc));
    expect(all).toEqual({
      runs: new Set([R1, R2]),
      cells: new Set(['prod/c1', 'prod/c2']),
      facts: true,
      cadence: true,
      publications: true,
      applies: true,
      requests: false,
      refused: [],
    });
  });

  it('reads entries as plain data, now and at earlier heads', () => {
    let doc = agentDoc();
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    doc = A.change(doc, (d: any) => {
      d.cells['prod/c1'] = { runId: S('r1'), plannedAt: 1 };
    });
    const earlier = A.getHeads(doc);
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    doc = A.change(doc, (d: any) => {
      d.cells['prod/c1'].plannedAt = 2;
    });
    const now = new DocReader(A.getBackend(doc));
    expect(now.root('site')).toBe('s1');
    expect(now.entry('cells', 'prod/c1')).toEqual({ runId: 'r1', plannedAt: 2 });
    expect(now.entry('runs', 'missing')).toBeUndefined();
    expect(new DocReader(A.getBackend(doc), earlier).entry('cells', 'prod/c1')).toEqual({
      runId: 'r1',
      plannedAt: 1,
    });
    const whole = new DocReader(A.getBackend(doc));
    whole.preload('cells');
    expect(whole.entry('cells', 'prod/c1')).toEqual({ runId: 'r1', plannedAt: 2 });
  });

  it('takes packed entries from the diff, without reading the document again', () => {
    let doc = agentDoc();
    const before = A.getHeads(doc);
    const cell = {
      environment: 'prod',
      component: 'c1',
      runId: '01JX0000000000000000000001',
      status: 'clean',
      plannedAt: 5,
      confirmations: 0,
    };
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    doc = A.change(doc, (d: any) => {
      d.cells['prod/c1'] = S(packDocEntry(cell as never));
      d.facts = { version: S('1'), cadenceS: {} };
    });
    const h = A.getBackend(doc);
    let reads = 0;
    const counted = new Proxy(h, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop === 'getWithType' || prop === 'materialize') reads++;
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const reader = new DocReader(counted);
    expect(reader.touched(before, A.getHeads(doc))).toEqual({
      runs: new Set(),
      cells: new Set(['prod/c1']),
      facts: true,
      cadence: true,
      publications: false,
      applies: false,
      requests: false,
      refused: [],
    });
    const readsForTouched = reads;
    expect(reader.entry('cells', 'prod/c1')).toEqual(cell);
    // One read of the document root (is there a `confirmed` map?), once per reader, not per entry.
    expect(reads).toBeLessThanOrEqual(readsForTouched + 1);
  });

  it('looks up confirmed entries only for cells that have one: one read of the map keys, not one per cell', () => {
    let doc = agentDoc();
    const cell = (c: number) => ({
      environment: 'prod',
      component: `c${c}`,
      runId: `01JX${String(c).padStart(22, '0')}`,
      status: 'clean',
      plannedAt: 5,
      confirmations: 0,
    });
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    doc = A.change(doc, (d: any) => {
      d.confirmed = { 'prod/other': S(JSON.stringify({ at: 9, n: 1 })) };
    });
    const before = A.getHeads(doc);
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    doc = A.change(doc, (d: any) => {
      for (let c = 0; c < 20; c++) d.cells[`prod/c${c}`] = S(packDocEntry(cell(c) as never));
    });
    let reads = 0;
    const h = A.getBackend(doc);
    const counted = new Proxy(h, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop === 'getWithType' || prop === 'materialize' || prop === 'keys') reads++;
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const reader = new DocReader(counted);
    const t = reader.touched(before, A.getHeads(doc));
    const readsForTouched = reads;
    for (const k of t.cells) expect(reader.entry('cells', k)).toEqual(cell(Number(k.slice(6))));
    expect(t.cells.size).toBe(20);
    // The `confirmed` map's id and its keys, once for the reader.
    expect(reads).toBeLessThanOrEqual(readsForTouched + 2);
  });

  it('applies a confirmed entry to its cell and names the cell it touched (decision 330)', () => {
    let doc = agentDoc();
    const cell = {
      environment: 'prod',
      component: 'c1',
      runId: '01JX0000000000000000000001',
      status: 'clean',
      commit: 'a'.repeat(40),
      plannedAt: 5,
      confirmations: 0,
    };
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    doc = A.change(doc, (d: any) => {
      d.cells['prod/c1'] = S(packDocEntry(cell as never));
      d.cells['prod/c2'] = S(packDocEntry({ ...cell, component: 'c2' } as never));
      d.confirmed = {};
    });
    expect(new DocReader(A.getBackend(doc)).hasConfirmed()).toBe(true);
    const before = A.getHeads(doc);
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    doc = A.change(doc, (d: any) => {
      d.confirmed['prod/c1'] = S(JSON.stringify({ at: 9, n: 2, commit: 'b'.repeat(40) }));
      // Hostile shapes are never walked or applied.
      d.confirmed['prod/c2'] = { at: 9, n: 1 };
    });
    const reader = new DocReader(A.getBackend(doc));
    const t = reader.touched(before, A.getHeads(doc));
    expect(t.cells).toEqual(new Set(['prod/c1', 'prod/c2']));
    expect(reader.entry('cells', 'prod/c1')).toEqual({
      ...cell,
      plannedAt: 9,
      unchangedSince: 5,
      confirmations: 2,
      commit: 'b'.repeat(40),
    });
    expect(reader.entry('cells', 'prod/c2')).toEqual({ ...cell, component: 'c2' });
    const fresh = new DocReader(A.getBackend(doc));
    fresh.preload('cells');
    expect(fresh.entry('cells', 'prod/c1')).toMatchObject({ plannedAt: 9, confirmations: 2 });
    expect(new DocReader(A.getBackend(doc), before).entry('cells', 'prod/c1')).toEqual(cell);
    expect(new DocReader(A.getBackend(agentDoc())).hasConfirmed()).toBe(false);
    // A changed plan rewrites the cell and removes the entry: the new cell alone is read.
    const again = A.getHeads(doc);
    // biome-ignore lint/suspicious/noExplicitAny: Automerge change callbacks receive an untyped proxy
    doc = A.change(doc, (d: any) => {
      d.cells['prod/c1'] = S(packDocEntry({ ...cell, status: 'drift', plannedAt: 20 } as never));
      delete d.confirmed['prod/c1'];
    });
    const last = new DocReader(A.getBackend(doc));
    expect(last.touched(again, A.getHeads(doc)).cells).toEqual(new Set(['prod/c1']));
    expect(last.entry('cells', 'prod/c1')).toEqual({ ...cell, status: 'drift', plannedAt: 20 });
  });
});
