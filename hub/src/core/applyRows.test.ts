import { packDocEntry } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { applyRows } from './applyRows.js';

const R1 = '01J00000000000000000000001';
const R2 = '01J00000000000000000000002';
const record = (runId: string) => ({
  runId,
  environment: 'prod',
  component: 'app',
  state: 'applied',
  approvalIds: ['a'],
  approvers: ['ed25519:x'],
  receivedAt: 1_000,
  startedAt: 2_000,
  finishedAt: 3_000,
  nextRunId: R2,
  updatedAt: 3_000,
});

describe('applyRows', () => {
  it('reads records written as maps or packed, with agent times moved to hub time', () => {
    const { rows, invalid } = applyRows(
      'mars-1',
      'a1',
      { [R1]: record(R1), [R2]: packDocEntry(record(R2) as never) },
      500,
    );
    expect(invalid).toEqual([]);
    expect(rows.map((r) => [r.runId, r.receivedAt, r.startedAt, r.finishedAt, r.reason])).toEqual([
      [R1, 500, 1_500, 2_500, null],
      [R2, 500, 1_500, 2_500, null],
    ]);
  });

  it('skips a record that fails its schema or is filed under another run, and names it', () => {
    const { rows, invalid } = applyRows(
      'mars-1',
      'a1',
      { [R1]: { ...record(R1), state: 'exploded' }, [R2]: record(R1) },
      0,
    );
    expect(rows).toEqual([]);
    expect(invalid).toEqual([`applies.${R1}`, `applies.${R2}`]);
    expect(applyRows('mars-1', 'a1', 'nonsense', 0)).toEqual({ rows: [], invalid: [] });
  });
});
