import { type BundleSiteRow, formatBytes, percent } from '../core/bundles.js';
import type { Route } from '../core/route.js';
import { linkProps } from '../hooks/useRoute.js';
import { RelTime } from './RelTime.js';

/** A table of bundle × site rows: state, bytes received, age; the site column only where it varies. */
export function BundleRows({
  rows,
  now,
  go,
  showSite,
  label,
}: {
  rows: readonly BundleSiteRow[];
  now: number;
  go: (r: Route) => void;
  showSite: boolean;
  label: string;
}) {
  return (
    <table class="table" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">bundle</th>
          {showSite ? <th scope="col">site</th> : null}
          <th scope="col">state</th>
          <th scope="col">received</th>
          <th scope="col">published</th>
          <th scope="col">last report</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={`${r.bundleId}/${r.site}`}>
            <td>
              {r.name} <span class="muted">({r.fileKind})</span>
            </td>
            {showSite ? (
              <td>
                <a {...linkProps({ view: 'site', site: r.site }, go)}>{r.site}</a>
              </td>
            ) : null}
            <td>
              <span class={`mark bundle-${r.state}`}>{r.state}</span>
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
