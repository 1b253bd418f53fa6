import type { CellStatus, FleetEnvironment, FleetSite } from '@driftline/protocol';
import { linkSentence, liveLink } from '../core/link.js';
import { NO_FILTERS, type Route } from '../core/route.js';
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

const worstFirst = (a: FleetSite, b: FleetSite) => {
  const rank = (s: FleetSite) => {
    const i = ['link-down', 'overdue', 'never-heard'].indexOf(s.link);
    return i < 0 ? 3 : i;
  };
  return (
    rank(a) - rank(b) ||
    (b.statusCounts.failed ?? 0) - (a.statusCounts.failed ?? 0) ||
    (b.statusCounts.blocked ?? 0) - (a.statusCounts.blocked ?? 0) ||
    (b.statusCounts.drift ?? 0) - (a.statusCounts.drift ?? 0) ||
    b.stale - a.stale ||
    (a.site < b.site ? -1 : 1)
  );
};

/** Per site: why it shows what it shows, last contact, and its cells by status (worst sites first). */
export function SiteTable({ sites, now, go }: { sites: readonly FleetSite[]; now: number; go: Go }) {
  return (
    <section aria-labelledby="sites-title">
      <h2 id="sites-title">Sites</h2>
      <table class="table counts">
        <caption class="sr-only">Sites, worst first, with their cells by status</caption>
        <thead>
          <tr>
            <th scope="col">site</th>
            <th scope="col">link</th>
            <th scope="col">last contact</th>
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
            .sort(worstFirst)
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
                  {s.link === 'ok' ? (
                    ''
                  ) : (
                    <span aria-hidden="true">{s.link === 'waiting' ? '◌ ' : '⌁ '}</span>
                  )}
                  {linkSentence(s, now)}
                </td>
                <td>{s.lastContactAt ? <RelTime iso={s.lastContactAt} now={now} /> : 'never'}</td>
                <td>{n(s.cells)}</td>
                {COUNTED.map((st) => (
                  <td key={st} class={(s.statusCounts[st] ?? 0) > 0 ? statusLook(st).tone : undefined}>
                    {n(s.statusCounts[st])}
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
    </section>
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
