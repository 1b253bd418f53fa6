// biome-ignore-all lint/a11y/useSemanticElements: a windowed grid positions rows absolutely, which <table> layout cannot do; the ARIA grid roles carry the semantics
// biome-ignore-all lint/a11y/useFocusableInteractive: in the ARIA grid pattern only cells take focus (roving tabindex), never rows or headers
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { CellStore } from '../core/cellStore.js';
import { type GridPos, moveInGrid } from '../core/gridNav.js';
import type { MatrixLayout, MatrixRow } from '../core/matrix.js';
import { prefixOffsets, scrollToShow, visibleRange } from '../core/virtual.js';
import { CellBody } from './CellBody.js';

export const SITE_ROW_H = 36;
export const CELL_ROW_H = 112;
const HEADER_H = 36;
/** Used when the container has no measured height yet (first paint, happy-dom). */
const FALLBACK_VIEWPORT = 900;

export interface MatrixGridProps {
  layout: MatrixLayout;
  store: CellStore;
  /** Bumps when a cell's content changes, so visible cells re-render. */
  version: number;
  now: number;
  unreachableSince: (site: string) => string | null;
  pivot: string | null;
  onOpenCell: (site: string, environment: string, component: string) => void;
  onOpenSite: (site: string) => void;
  onPivot: (component: string) => void;
}

/**
 * The matrix as an ARIA grid, windowed so only the rows in view exist in the DOM.
 * Sizes are strings with units: Preact 11 no longer appends `px` to numeric style values.
 */
export function MatrixGrid(p: MatrixGridProps) {
  const { layout } = p;
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(FALLBACK_VIEWPORT);
  const [active, setActive] = useState<GridPos>({ row: 0, col: 0 });
  const wantFocus = useRef(false);

  const offsets = useMemo(
    () => prefixOffsets(layout.rows.map((r) => (r.kind === 'site' ? SITE_ROW_H : CELL_ROW_H))),
    [layout],
  );
  const total = offsets[offsets.length - 1] ?? 0;
  const pos: GridPos = {
    row: Math.min(active.row, Math.max(0, layout.rows.length - 1)),
    col: Math.min(active.col, layout.columns.length),
  };

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setViewport(el.clientHeight > 0 ? el.clientHeight - HEADER_H : FALLBACK_VIEWPORT);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    if (!wantFocus.current) return;
    wantFocus.current = false;
    box.current?.querySelector<HTMLElement>(`[data-r="${pos.row}"][data-c="${pos.col}"]`)?.focus();
  });

  const { start, end } = visibleRange(offsets, scrollTop, viewport);
  const isHeading = (r: number) => layout.rows[r]?.kind === 'site';

  const activate = (row: MatrixRow, col: number) => {
    if (row.kind === 'site') return p.onOpenSite(row.site);
    if (col === 0) return p.pivot ? p.onOpenSite(row.site) : p.onPivot(row.component);
    const env = layout.columns[col - 1];
    if (env) p.onOpenCell(row.site, env, row.component);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Enter' || e.key === ' ') {
      const row = layout.rows[pos.row];
      if (row) {
        e.preventDefault();
        activate(row, pos.col);
      }
      return;
    }
    const pageRows = Math.max(1, Math.floor(viewport / CELL_ROW_H));
    const next = moveInGrid(
      pos,
      e.key,
      e.ctrlKey || e.metaKey,
      layout.rows.length,
      layout.columns.length,
      isHeading,
      pageRows,
    );
    if (!next) return;
    e.preventDefault();
    wantFocus.current = true;
    setActive(next);
    const el = box.current;
    if (el) {
      const top = scrollToShow(offsets, next.row, el.scrollTop, viewport);
      if (top !== el.scrollTop) {
        el.scrollTop = top;
        setScrollTop(top);
      }
    }
  };

  const width = `calc(var(--rowhead-w) + ${layout.columns.length} * var(--col-w))`;
  const rowsOut = [];
  for (let i = start; i < end; i++) {
    const row = layout.rows[i]!;
    const top = HEADER_H + offsets[i]!;
    const cellProps = (col: number) => ({
      role: 'gridcell' as const,
      'data-r': i,
      'data-c': col,
      tabIndex: pos.row === i && pos.col === col ? 0 : -1,
      onClick: () => {
        setActive({ row: i, col });
        activate(row, col);
      },
      onFocus: () => {
        if (pos.row !== i || pos.col !== col) setActive({ row: i, col });
      },
    });
    if (row.kind === 'site') {
      rowsOut.push(
        <div
          role="row"
          aria-rowindex={i + 2}
          class="g-row g-site"
          style={{ top: `${top}px`, height: `${SITE_ROW_H}px`, width }}
          key={`s:${row.site}`}
        >
          <div {...cellProps(0)} class="g-cell g-sitehead">
            <span class="site-link">{row.site}</span>{' '}
            <span class="muted">
              ({row.cells} {row.cells === 1 ? 'component' : 'components'})
            </span>
          </div>
        </div>,
      );
      continue;
    }
    rowsOut.push(
      <div
        role="row"
        aria-rowindex={i + 2}
        class="g-row"
        style={{ top: `${top}px`, height: `${CELL_ROW_H}px`, width }}
        key={`c:${row.site}:${row.component}`}
      >
        <div {...cellProps(0)} class="g-cell g-rowhead" role="rowheader">
          <span class="rowhead-label">{row.label}</span>
          {p.pivot ? null : <span class="muted small">{row.site}</span>}
        </div>
        {layout.columns.map((env, j) => {
          const cell = p.store.get(row.site, env, row.component);
          return (
            <div {...cellProps(j + 1)} class="g-cell g-data" key={env}>
              {cell ? (
                <CellBody cell={cell} now={p.now} unreachableSince={p.unreachableSince(row.site)} />
              ) : (
                <span class="muted">
                  — <span class="sr-only">not planned here</span>
                </span>
              )}
            </div>
          );
        })}
      </div>,
    );
  }

  return (
    <div
      ref={box}
      class="grid-box"
      role="grid"
      aria-label={
        p.pivot ? `Sites by environment for ${p.pivot}` : 'Components by environment, grouped by site'
      }
      aria-rowcount={layout.rows.length + 1}
      aria-colcount={layout.columns.length + 1}
      onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}
      onKeyDown={onKeyDown}
    >
      <div class="grid-inner" style={{ height: `${HEADER_H + total}px`, width }}>
        <div role="row" aria-rowindex={1} class="g-row g-header" style={{ height: `${HEADER_H}px`, width }}>
          <div role="columnheader" class="g-cell g-rowhead">
            {p.pivot ? 'site' : 'component'}
          </div>
          {layout.columns.map((env) => (
            <div role="columnheader" class="g-cell" key={env}>
              {env}
            </div>
          ))}
        </div>
        {rowsOut}
      </div>
    </div>
  );
}
