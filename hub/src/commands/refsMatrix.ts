import { MATRIX_PAGE_MAX, type MatrixCell, type MatrixResponse } from '@driftline/protocol';
import { MAX_REF_DEFAULT_CELLS } from '../core/RefQueries.js';

/**
 * Most cells `hub refs report` reads of a ref's matrix: as many as the hub's ref matrix holds default
 * cells (`MAX_REF_DEFAULT_CELLS`), so a fleet of 1,000 sites × 200 cells (issue 60) is always reported
 * whole, in 40 pages of 5,000. Past it the report says it was cut (decision 640).
 */
export const MAX_REPORT_CELLS = MAX_REF_DEFAULT_CELLS;

/** A ref's matrix as `hub refs report` read it: every page, or the first `MAX_REPORT_CELLS` cells. */
export interface RefMatrix {
  cells: MatrixCell[];
  asOf?: string;
  /** The matrix had more cells than were read: how many were read, and the cursor of the rest. */
  cut: { cells: number; next: string } | null;
}

/**
 * Reads every page of `/api/matrix?ref=…` by its `next` cursor, at most `maxCells` cells. Bounded: a
 * page that names a next page must hold a cell, so there are at most `maxCells` pages.
 */
export async function readRefMatrix(
  get: (path: string) => Promise<MatrixResponse>,
  ref: string,
  maxCells = MAX_REPORT_CELLS,
): Promise<RefMatrix> {
  const cells: MatrixCell[] = [];
  let asOf: string | undefined;
  let cursor: string | null = null;
  for (let page = 0; page < maxCells; page++) {
    const limit = Math.min(MATRIX_PAGE_MAX, maxCells - cells.length);
    const at = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const r = await get(`/api/matrix?ref=${encodeURIComponent(ref)}&limit=${limit}${at}`);
    // The first page's time: the report is as of when it began.
    asOf ??= r.asOf;
    cells.push(...r.cells);
    if (!r.next) return { cells, ...(asOf ? { asOf } : {}), cut: null };
    if (r.cells.length === 0 || r.next === cursor)
      throw new Error(`the hub's matrix of ${ref} named a next page without moving on (cursor ${r.next})`);
    cursor = r.next;
    if (cells.length >= maxCells) break;
  }
  return { cells, ...(asOf ? { asOf } : {}), cut: cursor ? { cells: cells.length, next: cursor } : null };
}
