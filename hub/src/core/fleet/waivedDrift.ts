import { isPlanStale } from '@driftline/protocol';
import type { CellCount, CellRow, ReadStore } from '../../ports/HubStore.js';
import { baseKind, kindBesideDrift } from './cellColumns.js';
import { CountRows } from './counted.js';

/** The most waived cells one read adjusts (a waiver over a whole fleet's drift is 200,000 at worst). */
export const WAIVED_CELLS_CAP = 20_000;

/** Cells whose open drift is all waived, as `Drift.waivedCells` names them (decision 421). */
export type WaivedCells = (now: number) => Promise<ReadonlySet<string>>;

/** A cell's key in a {@link WaivedCells} set. */
export const waivedKey = (c: Pick<CellRow, 'site' | 'environment' | 'component'>): string =>
  `${c.site}\u0000${c.environment}\u0000${c.component}`;

/**
 * Count rows with waived drift set aside: the read model counts a cell's drift whatever waivers say
 * (waivers are rules judged when read), so each waived cell the rows count as `drift` is moved to the
 * kind it has beside its drift (a failing check, blocked, or none): counted apart, never in attention,
 * as the cell's own view shows it (`driftWaived`). One bounded read of the waived cells.
 */
export async function countsWithoutWaived(
  store: Pick<ReadStore, 'getCells'>,
  waived: ReadonlySet<string>,
  rows: readonly CellCount[],
  keyOf: (c: CellRow) => string,
  now: number,
): Promise<CellCount[]> {
  if (waived.size === 0) return [...rows];
  const keys = [...waived].slice(0, WAIVED_CELLS_CAP).map((k) => {
    const [site = '', environment = '', component = ''] = k.split('\u0000');
    return { site, environment, component };
  });
  const out = new CountRows(rows);
  for (const c of await store.getCells(keys)) {
    if (!c || baseKind(c) !== 'drift') continue;
    const key = keyOf(c);
    const stale = out.take(key, c.status, 'drift', isPlanStale(c.plannedAt, c.expectedIntervalS, now));
    if (stale !== null) out.add(key, c.status, kindBesideDrift(c), stale, 1);
  }
  return out.rows();
}

/** The waived cells of `sites` only (a read of a few sites never reads the fleet's waived cells). */
export function waivedAt(waived: ReadonlySet<string>, sites: ReadonlySet<string>): ReadonlySet<string> {
  if (waived.size === 0) return waived;
  const out = new Set<string>();
  for (const k of waived) if (sites.has(k.slice(0, k.indexOf('\u0000')))) out.add(k);
  return out;
}
