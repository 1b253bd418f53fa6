import { DEFAULT_REF, type MatrixCell } from '@driftline/protocol';
import type { CellStore } from './cellStore.js';
import type { Filters } from './route.js';
import { isStale } from './stale.js';

/**
 * The dense matrix: one row per component, columns grouped by environment and, inside each group, one
 * column per site. Pivoted on a component: one row per site, one column per environment.
 */
export interface MatrixRow {
  /** The component of the row (the pivot's component when pivoted). */
  component: string;
  /** The row's site when pivoted, else null (the site comes from the column). */
  site: string | null;
  label: string;
}

export interface MatrixColumn {
  environment: string;
  /** The column's site; null when pivoted (the site comes from the row). */
  site: string | null;
}

/** A run of consecutive columns of one environment, for the grouped header. */
export interface ColumnGroup {
  environment: string;
  start: number;
  count: number;
}

export interface MatrixLayout {
  rows: MatrixRow[];
  columns: MatrixColumn[];
  groups: ColumnGroup[];
  /** Cells that passed the filters. */
  cellCount: number;
  /** Everything the filters can choose from, for the filter controls. */
  sites: string[];
  environments: string[];
  components: string[];
}

export function matchesFilters(cell: MatrixCell, f: Filters, nowMs: number): boolean {
  if (f.site && cell.site !== f.site) return false;
  if (f.environment && cell.environment !== f.environment) return false;
  if (f.q) {
    const q = f.q.toLowerCase();
    if (!cell.component.toLowerCase().includes(q) && !cell.site.toLowerCase().includes(q)) return false;
  }
  if (f.status && cell.status !== f.status) return false;
  if (f.staleOnly && !isStale(cell, nowMs)) return false;
  return true;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The site and component a grid position stands for. */
export function cellAt(row: MatrixRow, col: MatrixColumn): { site: string; component: string } {
  return { site: (row.site ?? col.site)!, component: row.component };
}

/** Lays the matrix out from the cells that pass the filters. */
export function layoutMatrix(
  store: CellStore,
  f: Filters,
  pivot: string | null,
  nowMs: number,
): MatrixLayout {
  const sites = new Set<string>();
  const environments = new Set<string>();
  const components = new Set<string>();
  const rowKeys = new Set<string>();
  const colKeys = new Map<string, MatrixColumn>();
  let cellCount = 0;
  for (const cell of store.all()) {
    sites.add(cell.site);
    environments.add(cell.environment);
    components.add(cell.component);
    if (pivot && cell.component !== pivot) continue;
    if (!matchesFilters(cell, f, nowMs)) continue;
    cellCount++;
    if (pivot) {
      rowKeys.add(cell.site);
      if (!colKeys.has(cell.environment))
        colKeys.set(cell.environment, { environment: cell.environment, site: null });
    } else {
      rowKeys.add(cell.component);
      const k = `${cell.environment}\u0000${cell.site}`;
      if (!colKeys.has(k)) colKeys.set(k, { environment: cell.environment, site: cell.site });
    }
  }
  const rows: MatrixRow[] = [...rowKeys]
    .sort(byText)
    .map((k) => (pivot ? { component: pivot, site: k, label: k } : { component: k, site: null, label: k }));
  const columns = [...colKeys.values()].sort(
    (a, b) => byText(a.environment, b.environment) || byText(a.site ?? '', b.site ?? ''),
  );
  const groups: ColumnGroup[] = [];
  columns.forEach((c, i) => {
    const last = groups[groups.length - 1];
    if (last && last.environment === c.environment) last.count++;
    else groups.push({ environment: c.environment, start: i, count: 1 });
  });
  return {
    rows,
    columns,
    groups,
    cellCount,
    sites: [...sites].sort(byText),
    environments: [...environments].sort(byText),
    components: [...components].sort(byText),
  };
}

/**
 * Whether a live `cell-updated` belongs to the matrix on screen. A ref's matrix takes that ref's cells;
 * the default view takes the cell's current ref, or, for a cell it does not hold yet, a cell without a
 * ref or of the default ref name (plans of other refs live in their own matrix).
 */
export function belongsToView(cell: MatrixCell, viewRef: string | null, store: CellStore): boolean {
  if (viewRef) return cell.ref === viewRef;
  const current = store.get(cell.site, cell.environment, cell.component);
  if (current) return (current.ref ?? null) === (cell.ref ?? null) || !cell.ref;
  return !cell.ref || cell.ref === DEFAULT_REF;
}
