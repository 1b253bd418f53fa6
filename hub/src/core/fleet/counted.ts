import type { CellCount } from '../../ports/HubStore.js';
import { kindWithStale } from './cellColumns.js';

/** Counts of a set of cells as the API shows them. */
export interface Tally {
  cells: number;
  statusCounts: Record<string, number>;
  stale: number;
  /** Cells with a plan (not `no-data`). */
  withData: number;
  /** By attention kind (stale included), `kindWithStale`. */
  kinds: Record<string, number>;
}

export const emptyTally = (): Tally => ({ cells: 0, statusCounts: {}, stale: 0, withData: 0, kinds: {} });

/** Adds one read-model count row to a tally. */
export function addCount(t: Tally, r: CellCount): Tally {
  t.cells += r.n;
  t.withData += r.n;
  t.statusCounts[r.status] = (t.statusCounts[r.status] ?? 0) + r.n;
  if (r.stale) t.stale += r.n;
  const k = kindWithStale(r.kind, r.stale);
  if (k) t.kinds[k] = (t.kinds[k] ?? 0) + r.n;
  return t;
}

/** Adds read-model count rows to a tally. */
export function addCounts(t: Tally, rows: Iterable<CellCount>): Tally {
  for (const r of rows) addCount(t, r);
  return t;
}

/** Adds tally `t` into `into` (in place). */
export function addTally(into: Tally, t: Tally): Tally {
  into.cells += t.cells;
  into.stale += t.stale;
  into.withData += t.withData;
  for (const k in t.statusCounts)
    into.statusCounts[k] = (into.statusCounts[k] ?? 0) + (t.statusCounts[k] ?? 0);
  for (const k in t.kinds) into.kinds[k] = (into.kinds[k] ?? 0) + (t.kinds[k] ?? 0);
  return into;
}

/** Adds `n` cells declared by an agent's cadence but not planned yet. */
export function addNoData(t: Tally, n: number): Tally {
  if (n <= 0) return t;
  t.cells += n;
  t.statusCounts['no-data'] = (t.statusCounts['no-data'] ?? 0) + n;
  return t;
}

/** Sums tallies. */
export function sumTallies(ts: Iterable<Tally>): Tally {
  const out = emptyTally();
  for (const t of ts) addTally(out, t);
  return out;
}

/** Groups count rows by key. */
export function byKey(rows: readonly CellCount[]): Map<string, CellCount[]> {
  const m = new Map<string, CellCount[]>();
  for (const r of rows) {
    const list = m.get(r.key);
    if (list) list.push(r);
    else m.set(r.key, [r]);
  }
  return m;
}

/**
 * Count rows being re-split (staleness judged at another time, waived drift set aside): one row per
 * (key, status, kind, stale), cells moved between them one at a time.
 */
export class CountRows {
  private readonly by = new Map<string, CellCount>();

  constructor(rows: Iterable<CellCount> = []) {
    for (const r of rows) this.add(r.key, r.status, r.kind, r.stale, r.n);
  }

  add(key: string, status: string, kind: string, stale: boolean, n: number): void {
    const id = `${key}\u0000${status}\u0000${kind}\u0000${stale ? 1 : 0}`;
    const r = this.by.get(id);
    if (r) r.n += n;
    else this.by.set(id, { key, status, kind, stale, n });
  }

  /** Takes one cell from (key, status, kind), from the `prefer` staleness if it has one; its staleness, or null. */
  take(key: string, status: string, kind: string, prefer: boolean): boolean | null {
    for (const stale of [prefer, !prefer]) {
      const r = this.by.get(`${key}\u0000${status}\u0000${kind}\u0000${stale ? 1 : 0}`);
      if (r && r.n > 0) {
        r.n -= 1;
        return stale;
      }
    }
    return null;
  }

  rows(): CellCount[] {
    return [...this.by.values()].filter((r) => r.n > 0);
  }
}
