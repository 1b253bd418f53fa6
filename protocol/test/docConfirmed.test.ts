import { describe, expect, it } from 'vitest';
import { type DocCell, overlayConfirmed, packDocEntry, plainAgentDoc, readConfirmed } from '../src/index.js';

const cell: DocCell = {
  environment: 'prod',
  component: 'vpc',
  runId: '01JX0000000000000000000000' as DocCell['runId'],
  status: 'clean',
  commit: 'a'.repeat(40),
  plannedAt: 1_000,
  confirmations: 0,
};

describe('confirmed entries (decision 330)', () => {
  it('moves plannedAt, keeps unchangedSince where the plan was first found, adds confirmations', () => {
    expect(overlayConfirmed(cell, JSON.stringify({ at: 5_000, n: 3 }))).toEqual({
      ...cell,
      plannedAt: 5_000,
      unchangedSince: 1_000,
      confirmations: 3,
    });
    const seeded = { ...cell, unchangedSince: 200, confirmations: 4 };
    expect(overlayConfirmed(seeded, JSON.stringify({ at: 5_000, n: 1, commit: 'b'.repeat(40) }))).toEqual({
      ...seeded,
      plannedAt: 5_000,
      confirmations: 5,
      commit: 'b'.repeat(40),
    });
  });

  it('leaves the cell as it is for an entry older than the cell, invalid, oversized or absent', () => {
    for (const bad of [
      JSON.stringify({ at: 999, n: 1 }),
      JSON.stringify({ at: 5_000, n: 0 }),
      JSON.stringify({ at: 5_000, n: 1, extra: 1 }),
      JSON.stringify({ at: 5_000, n: 1, commit: 'c'.repeat(65) }),
      `{"at":5000,"n":1,"commit":"${' '.repeat(300)}"}`,
      '{not json',
      42,
      undefined,
    ])
      expect(overlayConfirmed(cell, bad)).toEqual(cell);
    expect(overlayConfirmed('not a cell', JSON.stringify({ at: 5_000, n: 1 }))).toBe('not a cell');
    expect(readConfirmed({ val: '{"at":1,"n":1}', toJSON: () => '' })).toEqual({ at: 1, n: 1 });
  });

  it('shows the plain document with its cells confirmed and without the map itself', () => {
    const plain = plainAgentDoc({
      site: 's',
      cells: { 'prod/vpc': packDocEntry(cell) },
      confirmed: { 'prod/vpc': JSON.stringify({ at: 7_000, n: 2 }), 'prod/gone': '{"at":1,"n":1}' },
    }) as { cells: Record<string, DocCell>; confirmed?: unknown };
    expect(plain.cells['prod/vpc']).toMatchObject({
      plannedAt: 7_000,
      confirmations: 2,
      unchangedSince: 1_000,
    });
    expect(plain.cells['prod/gone']).toBeUndefined();
    expect(plain.confirmed).toBeUndefined();
  });
});
