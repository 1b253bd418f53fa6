import type { HubEvent, MatrixCell } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { coalesceEvents } from './coalesceEvents.js';

const cell = (component: string, status: MatrixCell['status']) =>
  ({ type: 'cell-updated', cell: { site: 'ship-7', environment: 'prod', component, status } }) as HubEvent;
const moved = (sites: string[], changed: number, confirmed: number, cells: number): HubEvent => ({
  type: 'fleet-moved',
  at: '2026-11-01T10:00:00.000Z',
  sites,
  moreSites: false,
  changed,
  confirmed,
  totals: { cells, statusCounts: { clean: cells }, stale: 0 },
});
const numbered = (es: HubEvent[]) => es.map((event, i) => ({ id: `e-${i}`, event }));

describe('coalesceEvents', () => {
  it('keeps the newest event of each cell and merges the batches into one fleet-moved', () => {
    const out = coalesceEvents(
      numbered([
        cell('net', 'clean'),
        moved(['ship-7'], 1, 10, 100),
        cell('dns', 'drift'),
        cell('net', 'failed'),
        moved(['lab', 'ship-7'], 2, 5, 101),
        { type: 'reset', reason: 'behind' },
      ]),
    );
    expect(
      out.map(({ event: e }) =>
        e.type === 'cell-updated' ? `${e.cell.component} ${e.cell.status}` : e.type,
      ),
    ).toEqual(['dns drift', 'net failed', 'fleet-moved', 'reset']);
    expect(out.map((e) => e.id)).toEqual(['e-2', 'e-3', 'e-4', 'e-5']);
    expect(out[2]?.event).toMatchObject({
      sites: ['lab', 'ship-7'],
      changed: 3,
      confirmed: 15,
      totals: { cells: 101 },
    });
  });
});
