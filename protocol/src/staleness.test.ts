import { describe, expect, it } from 'vitest';
import type { MatrixCell } from './api.js';
import { cellAgainstContact, isPlanStale, STALE_AFTER_INTERVALS, staleAt } from './staleness.js';

const T0 = Date.parse('2026-12-02T00:00:00Z');
const H = 3_600_000;

describe('staleness', () => {
  it('turns a plan stale after two declared cadences, never without one', () => {
    expect(STALE_AFTER_INTERVALS).toBe(2);
    expect(staleAt(T0, 3600)).toBe(T0 + 2 * H);
    expect(isPlanStale(T0, 3600, T0 + 2 * H)).toBe(false);
    expect(isPlanStale(T0, 3600, T0 + 2 * H + 1)).toBe(true);
    expect(isPlanStale(T0, null, T0 + 1000 * H)).toBe(false);
    expect(isPlanStale(T0, 0, T0 + 1000 * H)).toBe(false);
  });

  it('ages a cell of a planned site only up to its last contact plus the grace', () => {
    const cell = {
      plannedAt: new Date(T0).toISOString(),
      expectedIntervalS: 3600,
      stale: false,
    } as MatrixCell;
    const plan = { state: 'waiting' as const, nextWindowAt: new Date(T0 + 10 * H).toISOString(), graceS: 60 };
    // Heard from an hour after the plan; now is nine hours later: still fresh, waiting.
    const waiting = cellAgainstContact(cell, plan, T0 + H, T0 + 10 * H);
    expect(waiting).toMatchObject({ stale: false, contact: 'waiting', siteUnreachable: false });
    expect(waiting.nextWindowAt).toBe(plan.nextWindowAt);
    // Heard from three hours after the plan: the plan was stale when the site last spoke.
    expect(cellAgainstContact(cell, plan, T0 + 3 * H, T0 + 10 * H).stale).toBe(true);
    const gone = cellAgainstContact(cell, { ...plan, state: 'unreachable' }, null, T0 + H);
    expect(gone).toMatchObject({ stale: false, siteUnreachable: true, contact: 'unreachable' });
    expect(cellAgainstContact(cell, { ...plan, state: 'unplanned' }, null, T0 + 10 * H)).toBe(cell);
  });
});
