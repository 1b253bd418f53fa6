import type { MatrixCell } from '@driftline/protocol';

export function cellId(site: string, environment: string, component: string): string {
  return `${site}\u0000${environment}\u0000${component}`;
}

/**
 * The matrix as a map keyed by (site, environment, component). A live update of a known cell is O(1)
 * and leaves the row layout alone; only a new cell changes the layout (`layoutVersion`).
 */
export class CellStore {
  private readonly cells = new Map<string, MatrixCell>();
  layoutVersion = 0;
  version = 0;

  constructor(cells: readonly MatrixCell[] = []) {
    for (const c of cells) this.cells.set(cellId(c.site, c.environment, c.component), c);
  }

  get(site: string, environment: string, component: string): MatrixCell | undefined {
    return this.cells.get(cellId(site, environment, component));
  }

  /**
   * Applies a `cell-updated` event; answers whether the cell was new (the layout changed), or `older` when
   * the store already holds a fact that reached the hub later (an event from before the matrix was fetched).
   */
  upsert(cell: MatrixCell): 'added' | 'updated' | 'older' {
    const id = cellId(cell.site, cell.environment, cell.component);
    const current = this.cells.get(id);
    const known = current !== undefined;
    if (
      current?.receivedAt &&
      cell.receivedAt &&
      Date.parse(cell.receivedAt) < Date.parse(current.receivedAt)
    ) {
      return 'older';
    }
    this.cells.set(id, cell);
    this.version++;
    if (!known) this.layoutVersion++;
    return known ? 'updated' : 'added';
  }

  /**
   * Adds a fetched part of the matrix: a cell the store already holds from a later live event stays.
   * Answers how many cells were new (the layout changes once for the whole part).
   */
  addAll(cells: readonly MatrixCell[]): number {
    let added = 0;
    for (const c of cells) {
      const id = cellId(c.site, c.environment, c.component);
      const current = this.cells.get(id);
      if (current?.receivedAt && c.receivedAt && Date.parse(c.receivedAt) < Date.parse(current.receivedAt))
        continue;
      if (!current) added++;
      this.cells.set(id, c);
    }
    this.version++;
    if (added > 0) this.layoutVersion++;
    return added;
  }

  all(): IterableIterator<MatrixCell> {
    return this.cells.values();
  }

  get size(): number {
    return this.cells.size;
  }
}
