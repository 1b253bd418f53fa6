import { useMemo } from 'preact/hooks';
import { cellAgainstPlan } from '../core/contact.js';
import { layoutMatrix } from '../core/matrix.js';
import { countOf } from '../core/plural.js';
import type { Filters, Route } from '../core/route.js';
import { useMatrixData } from '../hooks/useMatrixData.js';
import { useNow } from '../hooks/useNow.js';
import { FilterBar } from './FilterBar.js';
import { COL_W, MatrixGrid, ROWHEAD_W } from './MatrixGrid.js';

/** How many tile columns the window has room for (at least a dozen where it cannot be measured). */
const visibleColumns = () =>
  Math.max(12, Math.ceil(((typeof window === 'undefined' ? 0 : window.innerWidth) - ROWHEAD_W) / COL_W));

interface Props {
  filters: Filters;
  pivot: string | null;
  go: (r: Route, opts?: { replace?: boolean }) => void;
}

/** The dense matrix: filters, search, ref, point in time, pivot, and the live, windowed grid. */
export function MatrixView({ filters, pivot, go }: Props) {
  const now = useNow();
  const { at, ref } = filters;
  const data = useMatrixData(at, ref, {
    environment: filters.environment || null,
    site: filters.site || null,
    pivot,
    visibleSites: visibleColumns(),
    status: at || ref ? null : filters.status,
  });
  const clockNow = at ? Date.parse(at) : now;
  const layout = useMemo(
    () => layoutMatrix(data.store, filters, pivot, clockNow),
    [data.store, data.layoutVersion, filters, pivot, filters.staleOnly ? clockNow : 0],
  );
  const loading = data.progress.done < data.progress.total;
  const setFilters = (f: Filters, replace = false) => go({ view: 'matrix', filters: f, pivot }, { replace });

  return (
    <section class="matrix-view" aria-labelledby="matrix-title">
      <h1 id="matrix-title" class="view-title">
        {pivot ? (
          <>
            {pivot}: sites × environments{' '}
            <button
              type="button"
              class="linkish"
              onClick={() => go({ view: 'matrix', filters, pivot: null })}
            >
              back to all components
            </button>
          </>
        ) : (
          'Plan status: components × environments and sites'
        )}
        {ref ? <span class="ref-chip"> ref {ref}</span> : null}
      </h1>
      <FilterBar
        filters={filters}
        onChange={setFilters}
        sites={layout.sites}
        environments={layout.environments}
        components={layout.components}
        pivot={pivot}
        onPivot={(c) => go({ view: 'matrix', filters, pivot: c || null })}
      />
      {at ? (
        <p class="banner" role="note">
          Showing the matrix as the hub knew it at {at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}. Live
          updates are paused.{' '}
          <button type="button" class="linkish" onClick={() => setFilters({ ...filters, at: null })}>
            Back to now
          </button>
        </p>
      ) : null}
      {data.error ? (
        <p class="error" role="alert">
          Could not load the matrix: {data.error}
        </p>
      ) : null}
      {loading && layout.cellCount === 0 && !data.error ? <p aria-busy="true">Loading the matrix…</p> : null}
      {!loading || layout.cellCount > 0 ? (
        <>
          <p class="muted small" aria-live="off">
            {countOf(layout.cellCount, 'cell')} · {countOf(layout.rows.length, pivot ? 'site' : 'component')}{' '}
            · {countOf(layout.columns.length, 'column')}
            {loading ? (
              <span aria-busy="true">
                {' '}
                · reading the matrix, part {data.progress.done + 1} of {data.progress.total}…
              </span>
            ) : null}
            <span class="legend">
              {' '}
              · +a ~c -d: resources to add, change, destroy · ◔ stale · ◌ waiting for its contact window · !
              overdue (a window passed without contact) · ⌁ site unreachable · hover or focus a tile for its
              detail
            </span>
          </p>
          {layout.cellCount === 0 ? (
            <p>{ref ? `No cells plan ref ${ref} with these filters.` : 'No cells match these filters.'}</p>
          ) : (
            <MatrixGrid
              layout={layout}
              store={data.store}
              filters={filters}
              version={data.version}
              now={clockNow}
              pivot={pivot}
              unreachableSince={(site) => data.sites.get(site)?.lastContactAt ?? null}
              judge={(c) => cellAgainstPlan(c, data.sites.get(c.site), clockNow)}
              onOpenCell={(site, environment, component) =>
                go({ view: 'cell', site, environment, component, status: null, ...(ref ? { ref } : {}) })
              }
              onOpenRow={(key) =>
                pivot ? go({ view: 'site', site: key }) : go({ view: 'matrix', filters, pivot: key })
              }
            />
          )}
        </>
      ) : null}
    </section>
  );
}
