import { type FleetSite, linkState, type SiteSummary } from '@driftline/protocol';
import { useState } from 'preact/hooks';
import { countOf } from '../core/plural.js';
import type { Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useServices } from '../services.js';
import { type SiteSort, SiteTable } from './FleetTables.js';

type Go = (r: Route) => void;

/** Sites per page of the overview's table: a screen or two, whatever the fleet's size. */
export const SITES_PAGE = 50;

/**
 * A row of `/api/sites` as the table shows it: the overview's facts of the site where it has them
 * (stale cells, agents, upstream), else judged from the summary alone.
 */
export function siteRow(s: SiteSummary, known: FleetSite | undefined): FleetSite {
  const withData = s.cells - (s.statusCounts['no-data'] ?? 0);
  const base: FleetSite = known ?? {
    site: s.site,
    cells: 0,
    statusCounts: {},
    stale: 0,
    unreachable: false,
    lastContactAt: null,
    expectedContactIntervalS: null,
    environments: [],
    agents: 0,
    agentsHeardFrom: 0,
    queueDepth: null,
    oldestUnsentAt: null,
    upstream: null,
    contactWindows: [],
    link: 'ok',
  };
  return {
    ...base,
    cells: s.cells,
    statusCounts: s.statusCounts,
    unreachable: s.unreachable,
    lastContactAt: s.lastContactAt,
    expectedContactIntervalS: s.expectedContactIntervalS,
    link: linkState(s, withData),
    ...(s.contact ? { contact: s.contact } : {}),
    ...(s.attentionCounts ? { attentionCounts: s.attentionCounts } : {}),
  };
}

/**
 * The overview's Sites table, paged, sorted and filtered by the hub (`GET /api/sites`, decision 401):
 * 50 rows a page with next and previous, a sort per column header and a name filter (`contains`).
 * `version` (the overview's `asOf`) reads the page again when the overview was read again.
 */
export function SitesPaged({
  known,
  version,
  now,
  go,
}: {
  known: readonly FleetSite[];
  version: string;
  now: number;
  go: Go;
}) {
  const { api } = useServices();
  const [sort, setSort] = useState<SiteSort>('problems');
  const [contains, setContains] = useState('');
  // Cursors of the pages before this one, and this page's (undefined: the first).
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const [page] = useLoad(
    () => api.sites({ sort, limit: SITES_PAGE, cursor, contains: contains || undefined }),
    [api, sort, contains, cursor, version],
  );
  const restart = () => setCursors([undefined]);
  const bySite = new Map(known.map((s) => [s.site, s] as const));
  const first = (cursors.length - 1) * SITES_PAGE;
  return (
    <section aria-labelledby="sites-title">
      <h2 id="sites-title">Sites</h2>
      <label class="small">
        Filter sites{' '}
        <input
          type="search"
          value={contains}
          maxLength={200}
          placeholder="name contains…"
          onInput={(e) => {
            setContains((e.target as HTMLInputElement).value);
            restart();
          }}
        />
      </label>
      {page.state === 'loading' ? (
        <p aria-busy="true">Loading sites…</p>
      ) : page.state === 'error' ? (
        <p class="error" role="alert">
          Could not load the sites: {page.message}
        </p>
      ) : (
        <>
          <SiteTable
            sites={page.data.sites.map((s) => siteRow(s, bySite.get(s.site)))}
            now={now}
            go={go}
            sort={sort}
            onSort={(s) => {
              setSort(s);
              restart();
            }}
          />
          <nav class="sites-pager" aria-label="Sites pages">
            <button
              type="button"
              disabled={cursors.length <= 1}
              onClick={() => setCursors(cursors.slice(0, -1))}
            >
              Previous
            </button>
            <span class="muted small" role="status">
              {page.data.sites.length === 0
                ? 'no sites match'
                : `${(first + 1).toLocaleString('en')}–${(first + page.data.sites.length).toLocaleString('en')} of ${countOf(page.data.total ?? first + page.data.sites.length, 'site')}`}
            </span>
            <button
              type="button"
              disabled={!page.data.next}
              onClick={() => page.data.next && setCursors([...cursors, page.data.next])}
            >
              Next
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
