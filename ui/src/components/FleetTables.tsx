import type { CellStatus, FleetEnvironment, FleetSite, SitesQueryParams } from '@driftline/protocol';
import { linkSentence, liveLink } from '../core/link.js';
import { NO_FILTERS, type Route } from '../core/route.js';
import { siteCount } from '../core/siteCounts.js';
import { statusLook } from '../core/status.js';
import { linkProps } from '../hooks/useRoute.js';
import { RelTime } from './RelTime.js';

type Go = (r: Route) => void;

/** Columns of the count tables: the statuses that need a person, then the rest. */
const COUNTED: readonly CellStatus[] = [
  'failed',
  'blocked',
  'drift',
  'locked',
  'changes',
  'clean',
  'no-data',
];

/** A stacked bar of the status counts (decoration: the numbers beside it say the same in text). */
function Bar({ counts, total }: { counts: Record<string, number>; total: number }) {
  if (total === 0) return <span class="bar" aria-hidden="true" />;
  return (
    <span class="bar" aria-hidden="true">
      {Object.entries(counts)
        .filter(([, n]) => n > 0)
        .map(([s, n]) => (
          <span key={s} class={`bar-seg ${statusLook(s as CellStatus).tone}`} style={{ flexGrow: n }} />
        ))}
    </span>
  );
}

const n = (x: number | undefined) => (x ? x.toLocaleString('en') : <span class="muted">0</span>);

/** Orders of the Sites table, as the hub sorts them (`GET /api/sites?sort=`). */
export type SiteSort = SitesQueryParams['sort'] & string;

const SORT_TEXT: Record<SiteSort, string> = {
  problems: 'worst first',
  site: 'by name',
  '-site': 'by name, Z to A',
  lastContact: 'longest silent first',
  '-lastContact': 'last heard first',
};

/** A column header that sorts on the server: first click its order, a second the reverse. */
function SortHeader({
  label,
  asc,
  desc,
  sort,
  onSort,
}: {
  label: string;
  asc: SiteSort;
  desc: SiteSort | null;
  sort: SiteSort;
  onSort: (s: SiteSort) => void;
}) {
  const on = sort === asc || sort === desc;
  const next = sort === asc && desc ? desc : asc;
  return (
    <th scope="col" aria-sort={on ? (sort === asc ? 'ascending' : 'descending') : 'none'}>
      <button type="button" class="sort-head" onClick={() => onSort(next)}>
        {label}
        <span class="sr-only">, sort {SORT_TEXT[next]}</span>
      </button>
    </th>
  );
}

/**
 * Per site: why it shows what it shows, last contact, and its cells by status: the rows of one page, in
 * the order the hub sorted them (`sort`); the headers of site, last contact and problems sort again.
 */
export function SiteTable({
  sites,
  now,
  go,
  sort,
  onSort,
}: {
  sites: readonly FleetSite[];
  now: number;
  go: Go;
  sort: SiteSort;
  onSort: (s: SiteSort) => void;
}) {
  return (
    <table class="table counts">
      <caption class="sr-only">Sites, {SORT_TEXT[sort]}, with their cells by status</caption>
      <thead>
        <tr>
          <SortHeader label="site" asc="site" desc="-site" sort={sort} onSort={onSort} />
          <SortHeader label="link" asc="problems" desc={null} sort={sort} onSort={onSort} />
          <SortHeader
            label="last contact"
            asc="lastContact"
            desc="-lastContact"
            sort={sort}
            onSort={onSort}
          />
          <th scope="col">cells</th>
          {COUNTED.map((s) => (
            <th scope="col" key={s}>
              {statusLook(s).label}
            </th>
          ))}
          <th scope="col">stale</th>
          <th scope="col">
            <span class="sr-only">share by status</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {sites
          .map((s) => liveLink(s, now))
          .map((s) => (
            <tr key={s.site} class={s.link !== 'ok' ? `link-${s.link}` : undefined}>
              <th scope="row">
                <a {...linkProps({ view: 'site', site: s.site }, go)}>{s.site}</a>{' '}
                <a
                  class="small"
                  {...linkProps(
                    { view: 'matrix', filters: { ...NO_FILTERS, site: s.site }, pivot: null },
                    go,
                  )}
                >
                  matrix<span class="sr-only"> of {s.site}</span>
                </a>
              </th>
              <td
                class={
                  s.link === 'ok' ? 'muted' : s.link === 'waiting' ? 'link-why link-is-waiting' : 'link-why'
                }
              >
                {s.link === 'ok' ? '' : <span aria-hidden="true">{s.link === 'waiting' ? '◌ ' : '⌁ '}</span>}
                {linkSentence(s, now)}
              </td>
              <td>{s.lastContactAt ? <RelTime iso={s.lastContactAt} now={now} /> : 'never'}</td>
              <td>{n(s.cells)}</td>
              {COUNTED.map((st) => (
                <td key={st} class={siteCount(s, st) > 0 ? statusLook(st).tone : undefined}>
                  {n(siteCount(s, st))}
                </td>
              ))}
              <td>{n(s.stale)}</td>
              <td>
                <Bar counts={s.statusCounts} total={s.cells} />
              </td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

/** Per environment: its cells by status across the sites, stale and at unreachable sites. */
export function EnvironmentTable({
  environments,
  go,
}: {
  environments: readonly FleetEnvironment[];
  go: Go;
}) {
  return (
    <section aria-labelledby="envs-title">
      <h2 id="envs-title">Environments</h2>
      <table class="table counts">
        <caption class="sr-only">Environments with their cells by status</caption>
        <thead>
          <tr>
            <th scope="col">environment</th>
            <th scope="col">sites</th>
            <th scope="col">cells</th>
            {COUNTED.map((s) => (
              <th scope="col" key={s}>
                {statusLook(s).label}
              </th>
            ))}
            <th scope="col">stale</th>
            <th scope="col">unreachable</th>
            <th scope="col">
              <span class="sr-only">share by status</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {environments.map((e) => (
            <tr key={e.environment}>
              <th scope="row">
                <a
                  {...linkProps(
                    { view: 'matrix', filters: { ...NO_FILTERS, environment: e.environment }, pivot: null },
                    go,
                  )}
                >
                  {e.environment}
                </a>
              </th>
              <td>{e.sites.length}</td>
              <td>{n(e.cells)}</td>
              {COUNTED.map((st) => (
                <td key={st} class={(e.statusCounts[st] ?? 0) > 0 ? statusLook(st).tone : undefined}>
                  {n(e.statusCounts[st])}
                </td>
              ))}
              <td>{n(e.stale)}</td>
              <td>{n(e.unreachable)}</td>
              <td>
                <Bar counts={e.statusCounts} total={e.cells} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
