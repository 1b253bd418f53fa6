import * as A from '@automerge/automerge';
import type { PlanSummary } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { type AgentAutomergeDoc, latestCells, newEpochDoc, readCell, readDoc } from './agentDoc.js';

import { comp, HOUR, N, round, T0 } from './testRounds.js';

/** Bytes the last round added to the saved document (what the next doc-delta carries, before brotli). */
const added = (before: AgentAutomergeDoc, after: AgentAutomergeDoc) =>
  A.saveSince(after, A.getHeads(before)).length;

describe('unchanged re-plans written apart from their cells (decision 330)', () => {
  it('costs under 64 B a cell before compression, against ~300 B for a rewritten cell', () => {
    const start = round(newEpochDoc('ship-7', 'a1', 1), T0, true).doc;
    const apart = round(start, T0 + 6 * HOUR, true);
    const whole = round(A.clone(start), T0 + 6 * HOUR, false);
    expect(apart.unchanged.every(Boolean)).toBe(true);
    expect(whole.unchanged.every(Boolean)).toBe(true);
    const apartBytes = added(start, apart.doc);
    const wholeBytes = added(start, whole.doc);
    expect(apartBytes / N).toBeLessThan(64);
    expect(wholeBytes / N).toBeGreaterThan(200);
    // Read back, both ways give the same cells.
    expect(readDoc(apart.doc).cells).toEqual(readDoc(whole.doc).cells);
  });

  it('reads the same cells as rewritten ones over rounds, a commit change, a changed plan and a new epoch', () => {
    let apart = round(newEpochDoc('ship-7', 'a1', 1), T0, true).doc;
    let whole = round(newEpochDoc('ship-7', 'a1', 1), T0, false).doc;
    const steps: ((i: number) => Partial<PlanSummary>)[] = [
      () => ({}),
      // Another commit that plans the same: the cell names the commit planned last.
      (i) => (i % 2 ? { git: { commit: 'd'.repeat(40) } as PlanSummary['git'] } : {}),
      () => ({}),
      // A changed plan for some cells: the cell is written again and its confirmed entry goes.
      (i) =>
        i % 5 === 0
          ? { status: 'drift', planHash: `${'f'.repeat(60)}${String(i).padStart(4, '0')}` as never }
          : {},
      () => ({}),
    ];
    for (const [k, over] of steps.entries()) {
      const at = T0 + (k + 1) * 6 * HOUR;
      const a = round(apart, at, true, over);
      const w = round(whole, at, false, over);
      expect(a.unchanged).toEqual(w.unchanged);
      apart = a.doc;
      whole = w.doc;
      expect(readDoc(apart).cells).toEqual(readDoc(whole).cells);
      // The commit planned last, whichever it was.
      expect(readCell(apart, `prod/${comp(1)}`)?.commit).toBe((k === 1 ? 'd' : 'c').repeat(40));
    }
    // Drifted at step 4, back to the first plan at step 5: a new run each time, no confirmation since.
    const c0 = readCell(apart, `prod/${comp(0)}`);
    expect(c0).toMatchObject({ status: 'clean', confirmations: 0, plannedAt: T0 + 30 * HOUR });
    const c1 = readCell(apart, `prod/${comp(1)}`);
    expect(c1).toMatchObject({ confirmations: 5, unchangedSince: T0, plannedAt: T0 + 30 * HOUR });
    // A changed plan removed its cell's entry; the others still have theirs.
    const map = (apart as unknown as { confirmed: Record<string, unknown> }).confirmed;
    expect(map[`prod/${comp(0)}`]).toBeUndefined();
    expect(map[`prod/${comp(1)}`]).toBeDefined();
    expect(latestCells(apart)).toEqual(latestCells(whole));
  });

  it('declares the map in every document it records facts in, whether or not it writes there yet', () => {
    const doc = round(newEpochDoc('ship-7', 'a1', 1), T0, false).doc;
    expect((doc as unknown as { confirmed?: unknown }).confirmed).toEqual({});
  });
});
