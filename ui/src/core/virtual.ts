/**
 * Windowing for the matrix (a fleet of 50,000 cells must paint in about a second): rows have one of a few fixed heights, so their
 * offsets are a prefix sum and the visible slice is two binary searches.
 */
export function prefixOffsets(heights: ArrayLike<number>): Float64Array {
  const out = new Float64Array(heights.length + 1);
  for (let i = 0; i < heights.length; i++) out[i + 1] = out[i]! + heights[i]!;
  return out;
}

/** Index of the row containing pixel `y` (clamped to the rows). */
export function rowAt(offsets: Float64Array, y: number): number {
  let lo = 0;
  let hi = offsets.length - 2;
  if (hi < 0) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The rows to render for a viewport, with `overscan` extra rows on each side. */
export function visibleRange(
  offsets: Float64Array,
  scrollTop: number,
  viewport: number,
  overscan = 4,
): { start: number; end: number } {
  const count = offsets.length - 1;
  if (count <= 0) return { start: 0, end: 0 };
  const start = Math.max(0, rowAt(offsets, scrollTop) - overscan);
  const end = Math.min(count, rowAt(offsets, scrollTop + viewport) + 1 + overscan);
  return { start, end };
}

/** The scrollTop that brings row `i` fully into view, or the current one if it already is. */
export function scrollToShow(offsets: Float64Array, i: number, scrollTop: number, viewport: number): number {
  const top = offsets[i] ?? 0;
  const bottom = offsets[i + 1] ?? top;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewport) return bottom - viewport;
  return scrollTop;
}
