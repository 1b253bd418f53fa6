/**
 * Keyboard movement in the matrix grid (WAI-ARIA grid pattern): arrows, Home/End, PageUp/PageDown,
 * Ctrl+Home/End. Column 0 is the row heading; heading-only rows (sites) have only column 0.
 */
export interface GridPos {
  row: number;
  col: number;
}

export function moveInGrid(
  pos: GridPos,
  key: string,
  ctrl: boolean,
  rowCount: number,
  colCount: number,
  isHeadingRow: (row: number) => boolean,
  pageRows: number,
): GridPos | null {
  const lastRow = rowCount - 1;
  const colsOf = (r: number) => (isHeadingRow(r) ? 1 : colCount + 1);
  const settle = (row: number, col: number, dir: 1 | -1): GridPos => {
    let r = Math.max(0, Math.min(lastRow, row));
    // Moving vertically through a data column skips site headings, which have no such column.
    if (col > 0) {
      let guard = rowCount;
      while (isHeadingRow(r) && guard-- > 0) {
        const next = r + dir;
        if (next < 0 || next > lastRow) return { row: r, col: 0 };
        r = next;
      }
    }
    return { row: r, col: Math.min(col, colsOf(r) - 1) };
  };
  switch (key) {
    case 'ArrowRight':
      return { row: pos.row, col: Math.min(pos.col + 1, colsOf(pos.row) - 1) };
    case 'ArrowLeft':
      return { row: pos.row, col: Math.max(pos.col - 1, 0) };
    case 'ArrowDown':
      return settle(pos.row + 1, pos.col, 1);
    case 'ArrowUp':
      return settle(pos.row - 1, pos.col, -1);
    case 'PageDown':
      return settle(pos.row + pageRows, pos.col, 1);
    case 'PageUp':
      return settle(pos.row - pageRows, pos.col, -1);
    case 'Home':
      return ctrl ? { row: 0, col: 0 } : { row: pos.row, col: 0 };
    case 'End':
      return ctrl ? { row: lastRow, col: colsOf(lastRow) - 1 } : { row: pos.row, col: colsOf(pos.row) - 1 };
    default:
      return null;
  }
}
