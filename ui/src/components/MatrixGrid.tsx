// biome-ignore-all lint/a11y/useSemanticElements: a windowed grid positions rows and columns itself, which <table> layout cannot do; the ARIA grid roles carry the semantics
// biome-ignore-all lint/a11y/useFocusableInteractive: in the ARIA grid pattern only cells take focus (roving tabindex), never rows or headers
import type { MatrixCell } from '@driftline/protocol';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CellStore } from '../core/cellStore.js';
import { type GridPos, moveInGrid } from '../core/gridNav.js';
import { cellAt, type MatrixLayout, matchesFilters } from '../core/matrix.js';
import type { Filters } from '../core/route.js';
import { isStale } from '../core/stale.js';
import { statusLook } from '../core/status.js';
import { tileSentence } from '../core/tile.js';
import { TileDetail, TileFace } from './Tile.js';

export const ROW_H = 30;
export const COL_W = 78;
export const ROWHEAD_W = 180;
const HEAD_H = 24;
/** Used when the container has no measured size yet (first paint, happy-dom). */
const FALLBACK = { w: 1200, h: 600 };
const OVERSCAN = 2;

export interface MatrixGridProps {
  layout: MatrixLayout;
  store: CellStore;
  filters: Filters;
  /** Bumps when a cell's content changes, so visible cells re-render. */
  version: number;
  now: number;
  unreachableSince: (site: string) => string | null;
  /** The cell as its site's contact plan reads it now (core/contact.ts); absent: as the hub sent it. */
  judge?: (cell: MatrixCell) => MatrixCell;
  pivot: string | null;
  onOpenCell: (site: string, environment: string, component: string) => void;
  onOpenRow: (key: string) => void;
}

interface Tip {
  row: number;
  col: number;
  x: number;
  y: number;
  up: boolean;
}

/**
 * The dense matrix as an ARIA grid, windowed in both directions: only the rows and columns in view exist
 * in the DOM. Each cell is a tile (icon, a few characters, age); its full text is its accessible content,
 * and a card shows it on hover or focus. Sizes carry units: Preact 11 does not append `px`.
 */
export function MatrixGrid(p: MatrixGridProps) {
  const { layout } = p;
  const box = useRef<HTMLDivElement>(null);
  const [scroll, setScroll] = useState({ top: 0, left: 0 });
  const [size, setSize] = useState(FALLBACK);
  const [active, setActive] = useState<GridPos>({ row: 0, col: 0 });
  const [tip, setTip] = useState<Tip | null>(null);
  const wantFocus = useRef(false);
  const heads = p.pivot ? 1 : 2;
  const headH = heads * HEAD_H;
  const nRows = layout.rows.length;
  const nCols = layout.columns.length;
  const pos: GridPos = {
    row: Math.min(active.row, Math.max(0, nRows - 1)),
    col: Math.min(active.col, nCols),
  };

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () =>
      setSize(el.clientHeight > 0 ? { w: el.clientWidth, h: el.clientHeight - headH } : FALLBACK);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [headH]);

  useEffect(() => {
    if (!wantFocus.current) return;
    wantFocus.current = false;
    box.current?.querySelector<HTMLElement>(`[data-r="${pos.row}"][data-c="${pos.col}"]`)?.focus();
  });

  const r0 = Math.max(0, Math.floor(scroll.top / ROW_H) - OVERSCAN);
  const r1 = Math.min(nRows, Math.ceil((scroll.top + size.h) / ROW_H) + OVERSCAN);
  const c0 = Math.max(0, Math.floor(scroll.left / COL_W) - OVERSCAN);
  const c1 = Math.min(nCols, Math.ceil((scroll.left + size.w - ROWHEAD_W) / COL_W) + OVERSCAN);

  const activate = (row: number, col: number) => {
    const r = layout.rows[row];
    if (!r) return;
    if (col === 0) return p.onOpenRow(r.site ?? r.component);
    const c = layout.columns[col - 1];
    if (!c) return;
    const at = cellAt(r, c);
    p.onOpenCell(at.site, c.environment, at.component);
  };

  const reveal = (next: GridPos) => {
    const el = box.current;
    if (!el) return;
    let { scrollTop: top, scrollLeft: left } = el;
    const y = next.row * ROW_H;
    if (y < top) top = y;
    else if (y + ROW_H > top + size.h) top = y + ROW_H - size.h;
    if (next.col > 0) {
      const x = (next.col - 1) * COL_W;
      const w = size.w - ROWHEAD_W;
      if (x < left) left = x;
      else if (x + COL_W > left + w) left = x + COL_W - w;
    }
    if (top !== el.scrollTop || left !== el.scrollLeft) {
      el.scrollTop = top;
      el.scrollLeft = left;
      setScroll({ top, left });
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      activate(pos.row, pos.col);
      return;
    }
    if (e.key === 'Escape') return setTip(null);
    const pageRows = Math.max(1, Math.floor(size.h / ROW_H));
    const next = moveInGrid(pos, e.key, e.ctrlKey || e.metaKey, nRows, nCols, () => false, pageRows);
    if (!next) return;
    e.preventDefault();
    wantFocus.current = true;
    setActive(next);
    reveal(next);
  };

  const showTip = (row: number, col: number, el: HTMLElement) => {
    const r = el.getBoundingClientRect();
    const up = r.bottom + 150 > window.innerHeight;
    setTip({
      row,
      col,
      x: Math.max(4, Math.min(r.left, window.innerWidth - 330)),
      y: up ? r.top : r.bottom,
      up,
    });
  };

  const width = `${ROWHEAD_W + nCols * COL_W}px`;
  const cellProps = (i: number, col: number) => ({
    'data-r': i,
    'data-c': col,
    'aria-colindex': col + 1,
    tabIndex: pos.row === i && pos.col === col ? 0 : -1,
  });
  /** The grid position of the cell an event happened in (handlers sit on the grid, not on each cell). */
  const posOf = (e: Event): { row: number; col: number; el: HTMLElement } | null => {
    const el = (e.target as HTMLElement | null)?.closest?.<HTMLElement>('[data-r]');
    if (!el) return null;
    return { row: Number(el.dataset.r), col: Number(el.dataset.c), el };
  };
  const delegated = {
    onClick: (e: MouseEvent) => {
      const at = posOf(e);
      if (!at) return;
      setActive({ row: at.row, col: at.col });
      activate(at.row, at.col);
    },
    onFocusIn: (e: FocusEvent) => {
      const at = posOf(e);
      if (!at) return;
      if (pos.row !== at.row || pos.col !== at.col) setActive({ row: at.row, col: at.col });
      if (at.col > 0) showTip(at.row, at.col, at.el);
      else setTip(null);
    },
    onFocusOut: () => setTip(null),
    onMouseOver: (e: MouseEvent) => {
      const at = posOf(e);
      if (!at || at.col === 0) return setTip(null);
      if (!tip || tip.row !== at.row || tip.col !== at.col) showTip(at.row, at.col, at.el);
    },
    onMouseLeave: () => setTip(null),
  };

  const spacer = (n: number) => (n > 0 ? <div class="g-spacer" style={{ width: `${n * COL_W}px` }} /> : null);
  const rowsOut = [];
  for (let i = r0; i < r1; i++) {
    const row = layout.rows[i]!;
    const cells = [];
    for (let j = c0; j < c1; j++) {
      const col = layout.columns[j]!;
      const at = cellAt(row, col);
      const stored = p.store.get(at.site, col.environment, at.component);
      const cell = stored && p.judge ? p.judge(stored) : stored;
      const shown = cell && matchesFilters(cell, p.filters, p.now) ? cell : null;
      const tone = shown ? statusLook(shown.status).tone : 'st-none';
      const marks = shown
        ? `${isStale(shown, p.now) ? ' is-stale' : ''}${shown.siteUnreachable ? ' is-unreachable' : ''}`
        : '';
      cells.push(
        <div role="gridcell" class={`g-cell tile ${tone}${marks}`} key={j} {...cellProps(i, j + 1)}>
          {shown ? (
            <>
              <TileFace cell={shown} now={p.now} />
              <span class="sr-only">{tileSentence(shown, p.now, p.unreachableSince(at.site))}</span>
            </>
          ) : (
            <span class="muted">
              <span aria-hidden="true">·</span>
              <span class="sr-only">
                {cell ? 'filtered out' : 'not planned here'}: {at.site} {col.environment}/{at.component}
              </span>
            </span>
          )}
        </div>,
      );
    }
    rowsOut.push(
      <div
        role="row"
        aria-rowindex={i + heads + 1}
        class="g-row"
        style={{ top: `${headH + i * ROW_H}px`, height: `${ROW_H}px`, width }}
        key={row.label}
      >
        <div role="rowheader" class="g-cell g-rowhead" {...cellProps(i, 0)}>
          {row.label}
        </div>
        {spacer(c0)}
        {cells}
      </div>,
    );
  }

  const groupHeads = layout.groups
    .filter((g) => g.start < c1 && g.start + g.count > c0)
    .map((g) => {
      const from = Math.max(g.start, c0);
      const to = Math.min(g.start + g.count, c1);
      return (
        <div
          role="columnheader"
          class="g-cell g-group"
          key={g.environment}
          aria-colindex={g.start + 2}
          aria-colspan={g.count}
          style={{ left: `${ROWHEAD_W + from * COL_W}px`, width: `${(to - from) * COL_W}px` }}
        >
          <span class="g-sticky">{g.environment}</span>
        </div>
      );
    });
  const tipRow = tip ? layout.rows[tip.row] : undefined;
  const tipCol = tip ? layout.columns[tip.col - 1] : undefined;
  const tipAt = tipRow && tipCol ? cellAt(tipRow, tipCol) : null;
  const tipStored = tipAt && tipCol ? p.store.get(tipAt.site, tipCol.environment, tipAt.component) : null;
  const tipData = tipStored && p.judge ? p.judge(tipStored) : tipStored;

  return (
    <>
      <div
        ref={box}
        class="grid-box dense"
        role="grid"
        aria-label={p.pivot ? `Sites by environment for ${p.pivot}` : 'Components by environment and site'}
        aria-rowcount={nRows + heads}
        aria-colcount={nCols + 1}
        onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement;
          setTip(null);
          setScroll({ top: el.scrollTop, left: el.scrollLeft });
        }}
        onKeyDown={onKeyDown}
        {...delegated}
      >
        <div class="grid-inner" style={{ height: `${headH + nRows * ROW_H}px`, width }}>
          <div class="g-head" style={{ height: `${headH}px`, width }}>
            {p.pivot ? null : (
              <div role="row" aria-rowindex={1} class="g-hrow" style={{ height: `${HEAD_H}px` }}>
                <div role="columnheader" class="g-cell g-corner" aria-colindex={1}>
                  environment
                </div>
                {groupHeads}
              </div>
            )}
            <div role="row" aria-rowindex={heads} class="g-hrow" style={{ height: `${HEAD_H}px` }}>
              <div role="columnheader" class="g-cell g-corner" aria-colindex={1}>
                {p.pivot ? 'site' : 'component'}
              </div>
              {layout.columns.slice(c0, c1).map((c, k) => (
                <div
                  role="columnheader"
                  class="g-cell g-colhead"
                  key={c0 + k}
                  aria-colindex={c0 + k + 2}
                  title={c.site ? `${c.environment} at ${c.site}` : c.environment}
                  style={{ left: `${ROWHEAD_W + (c0 + k) * COL_W}px` }}
                >
                  {c.site ?? c.environment}
                </div>
              ))}
            </div>
          </div>
          {rowsOut}
        </div>
      </div>
      {tip && tipData ? (
        <div
          class={`tip-card${tip.up ? ' up' : ''}`}
          aria-hidden="true"
          style={{ left: `${tip.x}px`, top: `${tip.y}px` }}
        >
          <TileDetail cell={tipData} now={p.now} unreachableSince={p.unreachableSince(tipData.site)} />
        </div>
      ) : null}
    </>
  );
}
