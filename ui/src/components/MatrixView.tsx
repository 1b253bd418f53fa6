import type { HubEvent, SiteSummary } from '@driftline/protocol';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { CellStore } from '../core/cellStore.js';
import { layoutMatrix } from '../core/matrix.js';
import type { Filters, Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { useServices } from '../services.js';
import { FilterBar } from './FilterBar.js';
import { MatrixGrid } from './MatrixGrid.js';

interface Props {
  filters: Filters;
  pivot: string | null;
  go: (r: Route, opts?: { replace?: boolean }) => void;
}

/** The matrix: filters, point in time, pivot, and the live, windowed grid. */
export function MatrixView({ filters, pivot, go }: Props) {
  const { api, live } = useServices();
  const now = useNow();
  const at = filters.at;
  const [loaded] = useLoad(async () => {
    const [m, s] = await Promise.all([api.matrix(at), api.sites()]);
    return { store: new CellStore(m.cells), asOf: m.asOf ?? null, sites: s.sites };
  }, [api, at]);
  const [version, setVersion] = useState(0);
  const [layoutVersion, setLayoutVersion] = useState(0);
  const loadedSites = useMemo(
    () =>
      new Map<string, SiteSummary>(loaded.state === 'ok' ? loaded.data.sites.map((s) => [s.site, s]) : []),
    [loaded],
  );
  const [siteUpdates, setSiteUpdates] = useState<Map<string, SiteSummary>>(new Map());

  // Live updates apply to "now" only; a point-in-time view is a fixed picture. The subscription starts
  // with the load, and events that arrive before the matrix does wait for it, so none fall in the gap.
  const early = useRef<HubEvent[]>([]);
  const storeRef = useRef<CellStore | null>(null);
  const apply = (store: CellStore, e: HubEvent) => {
    if (e.type === 'cell-updated') {
      if (store.upsert(e.cell) === 'added') setLayoutVersion(store.layoutVersion);
      setVersion(store.version);
    } else if (e.type === 'site-updated') {
      setSiteUpdates((m) => new Map(m).set(e.site.site, e.site));
    }
  };
  useEffect(() => {
    if (at) return;
    early.current = [];
    return live.subscribe((e) => {
      if (storeRef.current) apply(storeRef.current, e);
      else early.current.push(e);
    });
  }, [at, live]);
  useEffect(() => {
    storeRef.current = loaded.state === 'ok' ? loaded.data.store : null;
    if (!storeRef.current) return;
    for (const e of early.current) apply(storeRef.current, e);
    early.current = [];
  }, [loaded]);

  const clockNow = at ? Date.parse(at) : now;
  const layout = useMemo(
    () => (loaded.state === 'ok' ? layoutMatrix(loaded.data.store, filters, pivot, clockNow) : null),
    [loaded, filters, pivot, layoutVersion, filters.staleOnly ? clockNow : 0],
  );

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
          'Plan status: components × environments by site'
        )}
      </h1>
      <FilterBar
        filters={filters}
        onChange={setFilters}
        sites={layout?.sites ?? []}
        environments={layout?.environments ?? []}
        components={layout?.components ?? []}
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
      {loaded.state === 'loading' ? <p aria-busy="true">Loading the matrix…</p> : null}
      {loaded.state === 'error' ? (
        <p class="error" role="alert">
          Could not load the matrix: {loaded.message}
        </p>
      ) : null}
      {loaded.state === 'ok' && layout ? (
        <>
          <p class="muted small" aria-live="off">
            {layout.cellCount.toLocaleString('en')} cells ·{' '}
            {layout.rows.filter((r) => r.kind === 'site').length || layout.rows.length} sites
          </p>
          {layout.cellCount === 0 ? (
            <p>No cells match these filters.</p>
          ) : (
            <MatrixGrid
              layout={layout}
              store={loaded.data.store}
              version={version}
              now={clockNow}
              pivot={pivot}
              unreachableSince={(site) =>
                (siteUpdates.get(site) ?? loadedSites.get(site))?.lastContactAt ?? null
              }
              onOpenCell={(site, environment, component) =>
                go({ view: 'cell', site, environment, component, status: null })
              }
              onOpenSite={(site) => go({ view: 'site', site })}
              onPivot={(component) => go({ view: 'matrix', filters, pivot: component })}
            />
          )}
        </>
      ) : null}
    </section>
  );
}
