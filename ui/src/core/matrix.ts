import type { MatrixCell } from '@driftline/protocol';
import type { CellStore } from './cellStore.js';
import type { Filters } from './route.js';
import { isStale } from './stale.js';

/** One line of the matrix: a site heading, or one row of cells (a component at a site). */
export type MatrixRow =
  | { kind: 'site'; site: string; cells: number }
  | { kind: 'cells'; site: string; component: string; label: string };

export interface MatrixLayout {
  /** Column headings: the environments, sorted. */
  columns: string[];
  rows: MatrixRow[];
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
  if (f.q && !cell.component.toLowerCase().includes(f.q.toLowerCase())) return false;
  if (f.status && cell.status !== f.status) return false;
  if (f.staleOnly && !isStale(cell, nowMs)) return false;
  return true;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Lays the matrix out. Grouped (default): a heading per site, then one row per component of that site,
 * one column per environment. Pivot on a component: one row per site, same columns.
 */
export function layoutMatrix(
  store: CellStore,
  f: Filters,
  pivot: string | null,
  nowMs: number,
): MatrixLayout {
  const sites = new Set<string>();
  const environments = new Set<string>();
  const components = new Set<string>();
  const columns = new Set<string>();
  const bySite = new Map<string, Set<string>>();
  let cellCount = 0;
  for (const cell of store.all()) {
    sites.add(cell.site);
    environments.add(cell.environment);
    components.add(cell.component);
    if (pivot && cell.component !== pivot) continue;
    if (!matchesFilters(cell, f, nowMs)) continue;
    cellCount++;
    columns.add(cell.environment);
    let comps = bySite.get(cell.site);
    if (!comps) {
      comps = new Set();
      bySite.set(cell.site, comps);
    }
    comps.add(cell.component);
  }
  const rows: MatrixRow[] = [];
  const siteOrder = [...bySite.keys()].sort(byText);
  if (pivot) {
    for (const site of siteOrder) rows.push({ kind: 'cells', site, component: pivot, label: site });
  } else {
    for (const site of siteOrder) {
      const comps = [...bySite.get(site)!].sort(byText);
      rows.push({ kind: 'site', site, cells: comps.length });
      for (const component of comps) rows.push({ kind: 'cells', site, component, label: component });
    }
  }
  return {
    columns: [...columns].sort(byText),
    rows,
    cellCount,
    sites: [...sites].sort(byText),
    environments: [...environments].sort(byText),
    components: [...components].sort(byText),
  };
}
