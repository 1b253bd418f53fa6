import { pendingAt } from '../core/publications.js';
import type { Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useServices } from '../services.js';
import { PublicationRows } from './PublicationRows.js';

/** The site view's "Pending publications": those published for the site and not yet placed there. */
export function PendingPublications({
  site,
  now,
  go,
}: {
  site: string;
  now: number;
  go: (r: Route) => void;
}) {
  const { api } = useServices();
  const [loaded] = useLoad(() => api.publications(site), [api, site]);
  return (
    <>
      <h2>Pending publications</h2>
      {loaded.state === 'loading' ? <p aria-busy="true">Loading publications…</p> : null}
      {loaded.state === 'error' ? (
        <p class="error" role="alert">
          Could not load publications: {loaded.message}
        </p>
      ) : null}
      {loaded.state === 'ok'
        ? (() => {
            const rows = pendingAt(loaded.data.publications, site);
            return rows.length === 0 ? (
              <p class="muted">None: every publication for this site is placed, refused or expired.</p>
            ) : (
              <PublicationRows
                rows={rows}
                now={now}
                go={go}
                showSite={false}
                label={`Pending publications for ${site}`}
              />
            );
          })()
        : null}
    </>
  );
}
