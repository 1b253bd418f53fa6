import type { CellCount, CellRow, ReadStore } from '../../ports/HubStore.js';
import { baseKind, kindBesideDrift } from './cellColumns.js';

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
): Promise<CellCount[]> {
  if (waived.size === 0) return [...rows];
  const keys = [...waived].slice(0, WAIVED_CELLS_CAP).map((k) => {
    const [site = '', environment = '', component = ''] = k.split('\u0000');
    return { site, environment, component };
  });
  const out = rows.map((r) => ({ ...r }));
  const find = (key: string, status: string, kind: string, stale?: boolean) =>
    out.find(
      (r) =>
        r.key === key &&
        r.status === status &&
        r.kind === kind &&
        r.n > 0 &&
        (stale === undefined || r.stale === stale),
    );
  for (const c of await store.getCells(keys)) {
    if (!c || baseKind(c) !== 'drift') continue;
    const key = keyOf(c);
    const from = find(key, c.status, 'drift');
    if (!from) continue;
    from.n -= 1;
    const kind = kindBesideDrift(c);
    const to = find(key, c.status, kind, from.stale);
    if (to) to.n += 1;
    else out.push({ key, status: c.status, kind, stale: from.stale, n: 1 });
  }
  return out.filter((r) => r.n > 0);
}
