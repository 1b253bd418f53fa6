import { type CellStatus, PLAN_STATUSES, type RunListItem } from '@driftline/protocol';
import { useEffect, useState } from 'preact/hooks';
import { failingChecksText } from '../core/checks.js';
import type { Route } from '../core/route.js';
import { statusLook } from '../core/status.js';
import { formatLag } from '../core/time.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { linkProps } from '../hooks/useRoute.js';
import { useServices } from '../services.js';
import { CellHistory, matrixThen } from './CellHistory.js';
import { CheckEpisodes } from './CheckEpisodes.js';
import { PlanNow } from './PlanNow.js';
import { RelTime } from './RelTime.js';
import { StateLockNote } from './StateLockNote.js';
import { StatusBadge } from './StatusBadge.js';

interface Props {
  site: string;
  environment: string;
  component: string;
  status: CellStatus | null;
  /** The ref whose runs to show; null or absent: the default ref. */
  cellRef?: string | null;
  go: (r: Route) => void;
}

/** One cell's history of runs, filterable by status, with "plan now". */
export function CellView({ site, environment, component, status, cellRef = null, go }: Props) {
  const { api, live } = useServices();
  const now = useNow();
  const [loaded] = useLoad(
    () => api.runs(site, environment, component, { status, ref: cellRef }),
    [api, site, environment, component, status, cellRef],
  );
  const [extra, setExtra] = useState<RunListItem[]>([]);
  const [older, setOlder] = useState<{ runs: RunListItem[]; next: string | null } | null>(null);

  useEffect(() => {
    setExtra([]);
    setOlder(null);
    return live.subscribe((e) => {
      if (e.type !== 'run-added') return;
      const r = e.run;
      if (r.site !== site || r.environment !== environment || r.component !== component) return;
      if (status && r.status !== status) return;
      if (cellRef && r.ref !== cellRef) return;
      setExtra((xs) => [r, ...xs.filter((x) => x.runId !== r.runId)]);
    });
  }, [live, site, environment, component, status, cellRef]);

  const base = loaded.state === 'ok' ? loaded.data.runs : [];
  const seen = new Set(extra.map((r) => r.runId));
  const runs = [...extra, ...base.filter((r) => !seen.has(r.runId)), ...(older?.runs ?? [])];
  const next = older ? older.next : loaded.state === 'ok' ? loaded.data.nextBefore : null;
  // The cell's latest run met a lock (unfiltered: a filtered list's first run need not be the latest).
  const latest = status ? undefined : runs[0];
  const lock =
    latest?.lock && (latest.status === 'locked' || latest.reason === 'stuck-lock') ? latest.lock : undefined;

  const loadOlder = async () => {
    if (!next) return;
    const page = await api.runs(site, environment, component, { status, before: next, ref: cellRef });
    setOlder((o) => ({ runs: [...(o?.runs ?? []), ...page.runs], next: page.nextBefore }));
  };

  return (
    <section aria-labelledby="cell-title">
      <h1 id="cell-title" class="view-title">
        <a {...linkProps({ view: 'site', site }, go)}>{site}</a> / {environment} / {component}
        {cellRef ? <span class="ref-chip"> @ {cellRef}</span> : null}
      </h1>
      <PlanNow site={site} environment={environment} component={component} />
      {lock ? <StateLockNote lock={lock} stuck={latest?.reason === 'stuck-lock'} /> : null}
      {/* The hub keeps episodes of the default ref's plans only (decision 421): none for an `@ref` cell. */}
      {cellRef ? null : (
        <CheckEpisodes
          site={site}
          environment={environment}
          component={component}
          reloadKey={extra[0]?.runId ?? ''}
          go={go}
        />
      )}
      <label>
        Show runs with status{' '}
        <select
          value={status ?? ''}
          onChange={(e) => {
            const v = (e.currentTarget as HTMLSelectElement).value;
            go({
              view: 'cell',
              site,
              environment,
              component,
              status: PLAN_STATUSES.find((s) => s === v) ?? null,
              ...(cellRef ? { ref: cellRef } : {}),
            });
          }}
        >
          <option value="">any</option>
          {PLAN_STATUSES.map((s) => (
            <option key={s} value={s}>
              {statusLook(s).label}
            </option>
          ))}
        </select>
      </label>
      {status ? null : <CellHistory runs={runs} site={site} component={component} now={now} go={go} />}
      {loaded.state === 'loading' ? <p aria-busy="true">Loading runs…</p> : null}
      {loaded.state === 'error' ? (
        <p class="error" role="alert">
          Could not load the runs: {loaded.message}
        </p>
      ) : null}
      {loaded.state === 'ok' && runs.length === 0 ? (
        <p>No runs recorded for this cell{status ? ' with that status' : ''}.</p>
      ) : null}
      {runs.length > 0 ? (
        <table class="table">
          <caption class="sr-only">Runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">status</th>
              <th scope="col">planned</th>
              <th scope="col">received</th>
              <th scope="col">agent</th>
              <th scope="col">run</th>
              <th scope="col">
                <span class="sr-only">matrix as known then</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.runId}>
                <td>
                  <StatusBadge status={r.status} counts={r.counts} reason={r.reason} />
                  {r.unchanged ? <span class="muted small"> (unchanged)</span> : null}
                  {(r.checksFailed ?? 0) > 0 ? (
                    <span class="mark mark-check small">
                      {' '}
                      <span aria-hidden="true">✓✕</span> {failingChecksText(r.checksFailed, r.failingChecks)}
                    </span>
                  ) : null}
                </td>
                <td>
                  <RelTime iso={r.plannedAt} now={now} focusable />
                </td>
                <td>{formatLag(r.plannedAt, r.receivedAt)}</td>
                <td>{r.agent}</td>
                <td>
                  <a {...linkProps({ view: 'run', runId: r.runId }, go)}>{r.runId}</a>
                </td>
                <td>
                  <a class="small" {...linkProps(matrixThen(r.receivedAt, site, component), go)}>
                    matrix then
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {next ? (
        <button type="button" onClick={loadOlder}>
          Older runs
        </button>
      ) : null}
    </section>
  );
}
