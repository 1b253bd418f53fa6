import type { RelayInfo, RelaysResponse } from '@driftline/protocol';
import { formatAbsolute, formatAgo } from '../core/time.js';
import type { Loaded } from '../hooks/useLoad.js';

function When({ at, now }: { at: string | null; now: number }) {
  if (!at) return <span class="muted">never</span>;
  return (
    <time dateTime={at} title={formatAbsolute(at)}>
      {formatAgo(at, now)}
    </time>
  );
}

function Custody({ r, now }: { r: RelayInfo; now: number }) {
  const c = r.status?.custody;
  if (!c) return <span class="muted">—</span>;
  if (c.bundles === 0) return <span>empty</span>;
  const oldest = c.oldestAt === null ? null : new Date(c.oldestAt).toISOString();
  return (
    <span>
      {c.bundles} bundle{c.bundles === 1 ? '' : 's'}
      {oldest ? (
        <>
          , oldest <When at={oldest} now={now} />
        </>
      ) : null}
    </span>
  );
}

/**
 * The Links view's relays: each relay the hub issued a token to, what it last reported of itself
 * (`POST /v1/status`: refusals, sites refused, custody) and each problem with the command that fixes it.
 * A revoked relay stays, last, as `revoked at …` (its history is audit material). Nothing is shown for a
 * hub from before `/api/relays`, or with no relays. The Links view loads them (its sites' sentences read them too).
 */
export function RelaysHealth({ now, relays }: { now: number; relays: Loaded<RelaysResponse> }) {
  if (relays.state !== 'ok' || relays.data.relays.length === 0) return null;
  return (
    <section aria-labelledby="relays-title">
      <h2 id="relays-title">Relays</h2>
      <table class="table relays">
        <caption class="sr-only">Each relay's own report, relays with problems first</caption>
        <thead>
          <tr>
            <th scope="col">relay</th>
            <th scope="col">acts for</th>
            <th scope="col">last report</th>
            <th scope="col">custody</th>
            <th scope="col">problems and their fix</th>
          </tr>
        </thead>
        <tbody>
          {[...relays.data.relays]
            .sort(
              (a, b) =>
                Number(!!a.revokedAt) - Number(!!b.revokedAt) ||
                b.problems.length - a.problems.length ||
                (a.name < b.name ? -1 : 1),
            )
            .map((r) => (
              <tr
                key={r.name}
                class={r.revokedAt ? 'relay-revoked' : r.problems.length > 0 ? 'relay-problem' : 'relay-ok'}
              >
                <th scope="row">
                  {r.name}
                  {r.unkeyed ? (
                    <>
                      {' '}
                      <span
                        class="badge unkeyed"
                        title="enrolled without a key (hub peer add --no-key): the clocks it passes on are not checked, only bounded"
                      >
                        unkeyed
                      </span>
                    </>
                  ) : null}
                </th>
                <td>{r.sites.join(', ') || '—'}</td>
                <td>
                  {r.status ? <When at={r.reportedAt} now={now} /> : <span class="muted">no report yet</span>}
                </td>
                <td>
                  <Custody r={r} now={now} />
                </td>
                <td>
                  {r.revokedAt ? (
                    <span>
                      revoked at{' '}
                      <time dateTime={r.revokedAt} title={formatAgo(r.revokedAt, now)}>
                        {formatAbsolute(r.revokedAt)}
                      </time>
                    </span>
                  ) : r.problems.length === 0 ? (
                    <span>{r.status ? 'ok' : '—'}</span>
                  ) : (
                    <ul class="relay-problems">
                      {r.problems.map((p) => (
                        <li key={p.code} data-code={p.code}>
                          {p.message}
                          <br />
                          fix: <code>{p.fix}</code>
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
              </tr>
            ))}
        </tbody>
      </table>
    </section>
  );
}
