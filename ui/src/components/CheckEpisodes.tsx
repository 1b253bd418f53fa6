import type { DriftEpisode, DriftResponse } from '@driftline/protocol';
import { useRef } from 'preact/hooks';
import { countOf } from '../core/plural.js';
import type { Route } from '../core/route.js';
import { formatAbsolute, formatDuration } from '../core/time.js';
import { useLoad } from '../hooks/useLoad.js';
import { linkProps } from '../hooks/useRoute.js';
import { useServices } from '../services.js';

const STATE_TEXT: Record<DriftEpisode['state'], string> = {
  open: 'failing',
  waived: 'failing (waived)',
  resolved: 'passed again',
};

/**
 * A cell's failing-check episodes as the hub keeps them (decision 420): which `check` fails, since when,
 * and the ones that passed again. Nothing when the cell never failed a check. Read again when `reloadKey`
 * moves (a run of the cell arrived).
 */
export function CheckEpisodes(p: {
  site: string;
  environment: string;
  component: string;
  reloadKey: string;
  go: (r: Route) => void;
}) {
  const { api } = useServices();
  const [loaded] = useLoad(
    () =>
      api.drift({
        site: p.site,
        environment: p.environment,
        component: p.component,
        kind: 'check',
        limit: 50,
      }),
    [api, p.site, p.environment, p.component, p.reloadKey],
  );
  // While it reads again, the last answer stays on the page rather than blinking out.
  const last = useRef<DriftResponse | null>(null);
  if (loaded.state === 'ok') last.current = loaded.data;
  if (loaded.state === 'error')
    return <p class="muted">Could not load this cell's check episodes: {loaded.message}</p>;
  const episodes = last.current?.episodes ?? [];
  if (episodes.length === 0) return null;
  const failing = episodes.filter((e) => e.state !== 'resolved').length;
  return (
    <section aria-labelledby="checks-title" class="check-episodes">
      <h2 id="checks-title">{failing > 0 ? countOf(failing, 'failing check') : 'No failing check now'}</h2>
      <table class="table">
        <caption class="sr-only">Check episodes, newest first</caption>
        <thead>
          <tr>
            <th scope="col">check</th>
            <th scope="col">state</th>
            <th scope="col">first seen</th>
            <th scope="col">last seen</th>
            <th scope="col">lasted</th>
          </tr>
        </thead>
        <tbody>
          {episodes.map((e) => (
            <tr key={e.id} data-state={e.state}>
              <td>
                <code>{e.address}</code>
              </td>
              <td>
                <span class={e.state === 'resolved' ? 'muted' : 'st-failed'}>{STATE_TEXT[e.state]}</span>
              </td>
              <td>
                <a {...linkProps({ view: 'run', runId: e.firstRunId }, p.go)}>
                  {formatAbsolute(e.firstSeen)}
                </a>
              </td>
              <td>{formatAbsolute(e.lastSeen)}</td>
              <td>
                {formatDuration(e.durationS * 1000)}
                {e.resolvedAt ? null : <span class="muted"> so far</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
