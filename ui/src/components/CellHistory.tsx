import type { RunListItem } from '@driftline/protocol';
import { failingChecksText } from '../core/checks.js';
import { driftEpisodes, timeline } from '../core/episodes.js';
import { NO_FILTERS, type Route } from '../core/route.js';
import { statusLook, statusText } from '../core/status.js';
import { formatAbsolute, formatAgo, formatDuration } from '../core/time.js';
import { linkProps } from '../hooks/useRoute.js';

type Go = (r: Route) => void;

/** The matrix as the hub knew it right after `iso`, narrowed to one cell's site and component. */
export const matrixThen = (iso: string, site: string, component: string): Route => ({
  view: 'matrix',
  filters: { ...NO_FILTERS, at: iso, site, q: component },
  pivot: null,
});

/**
 * A cell's recent history: a status strip of its last runs (oldest left, each a link to the run) and
 * its drift episodes (first seen, last seen, resolved), from the runs read so far.
 */
export function CellHistory({
  runs,
  site,
  component,
  now,
  go,
}: {
  runs: readonly RunListItem[];
  site: string;
  component: string;
  now: number;
  go: Go;
}) {
  const strip = timeline(runs);
  const episodes = driftEpisodes(runs);
  if (strip.length === 0) return null;
  const first = strip[0]!;
  const last = strip[strip.length - 1]!;
  return (
    <section aria-labelledby="history-title" class="history">
      <h2 id="history-title">{strip.length === 1 ? 'Last run' : `Last ${strip.length} runs`}</h2>
      <div class="strip-wrap">
        <ol class="strip" aria-label={`Last ${strip.length} runs, oldest first`}>
          {strip.map((r) => {
            const look = statusLook(r.status);
            const text = `${statusText(r.status, r.counts, r.reason)}, planned ${formatAgo(r.plannedAt, now)} (${formatAbsolute(r.plannedAt)})${r.unchanged ? ', unchanged' : ''}${(r.checksFailed ?? 0) > 0 ? `, ${failingChecksText(r.checksFailed, r.failingChecks)}` : ''}`;
            return (
              <li key={r.runId} class={`strip-run ${look.tone}`}>
                <a {...linkProps({ view: 'run', runId: r.runId }, go)} title={text}>
                  <span aria-hidden="true">
                    {look.icon}
                    {(r.checksFailed ?? 0) > 0 ? '✕' : ''}
                  </span>
                  <span class="sr-only">{text}</span>
                </a>
              </li>
            );
          })}
        </ol>
        <p class="strip-axis muted small">
          <span>{formatAbsolute(first.plannedAt)}</span>
          {strip.length > 1 ? <span>{formatAbsolute(last.plannedAt)}</span> : null}
        </p>
      </div>
      <h2>Drift episodes</h2>
      {episodes.length === 0 ? (
        // Resource drift only: failing checks are episodes of their own, shown apart (issue 58).
        <p class="muted">No resource drift found in these runs.</p>
      ) : (
        <table class="table">
          <caption class="sr-only">Drift episodes, newest first</caption>
          <thead>
            <tr>
              <th scope="col">first seen</th>
              <th scope="col">last seen</th>
              <th scope="col">resolved</th>
              <th scope="col">runs</th>
              <th scope="col">resources (most)</th>
            </tr>
          </thead>
          <tbody>
            {episodes.map((e) => (
              <tr key={e.firstRunId}>
                <td>
                  <a {...linkProps({ view: 'run', runId: e.firstRunId }, go)}>
                    {formatAbsolute(e.firstSeen)}
                  </a>{' '}
                  <a class="small" {...linkProps(matrixThen(e.firstReceivedAt, site, component), go)}>
                    matrix then
                  </a>
                </td>
                <td>{formatAbsolute(e.lastSeen)}</td>
                <td>
                  {e.resolvedAt ? (
                    <>
                      {formatAbsolute(e.resolvedAt)}{' '}
                      <span class="muted">
                        (after {formatDuration(Date.parse(e.resolvedAt) - Date.parse(e.firstSeen))})
                      </span>
                    </>
                  ) : (
                    <span class="st-drift">ongoing</span>
                  )}
                </td>
                <td>{e.runs}</td>
                <td>{e.maxDrift}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
