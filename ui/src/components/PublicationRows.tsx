import { formatBytes, type PublicationSiteRow, percent } from '../core/publications.js';
import type { Route } from '../core/route.js';
import { linkProps } from '../hooks/useRoute.js';
import { RelTime } from './RelTime.js';

/** A table of publication × site rows: state, bytes received, age; the site column only where it varies. */
export function PublicationRows({
  rows,
  now,
  go,
  showSite,
  label,
}: {
  rows: readonly PublicationSiteRow[];
  now: number;
  go: (r: Route) => void;
  showSite: boolean;
  label: string;
}) {
  return (
    <table class="table" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">publication</th>
          {showSite ? <th scope="col">site</th> : null}
          <th scope="col">state</th>
          <th scope="col">received</th>
          <th scope="col">published</th>
          <th scope="col">last report</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={`${r.publicationId}/${r.site}`}>
            <td>
              {r.name} <span class="muted">({r.fileKind})</span>
            </td>
            {showSite ? (
              <td>
                <a {...linkProps({ view: 'site', site: r.site }, go)}>{r.site}</a>
              </td>
            ) : null}
            <td>
              <span class={`mark publication-${r.state}`}>{r.state}</span>
              {r.reason ? <span class="muted"> — {r.reason}</span> : null}
            </td>
            <td>
              <progress
                max={r.size}
                value={Math.min(r.bytes, r.size)}
                aria-label={`${r.name} at ${r.site}: ${percent(r.bytes, r.size)}% received`}
              />{' '}
              {formatBytes(r.bytes)} of {formatBytes(r.size)} ({percent(r.bytes, r.size)}%)
            </td>
            <td>
              <RelTime iso={r.publishedAt} now={now} />
            </td>
            <td>{r.updatedAt ? <RelTime iso={r.updatedAt} now={now} /> : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
