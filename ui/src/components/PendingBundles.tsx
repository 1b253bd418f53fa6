import { pendingAt } from '../core/bundles.js';
import type { Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useServices } from '../services.js';
import { BundleRows } from './BundleRows.js';

/** The site view's "Pending bundles": those published for the site and not yet placed there. */
export function PendingBundles({ site, now, go }: { site: string; now: number; go: (r: Route) => void }) {
  const { api } = useServices();
  const [loaded] = useLoad(() => api.bundles(site), [api, site]);
  return (
    <>
      <h2>Pending bundles</h2>
      {loaded.state === 'loading' ? <p aria-busy="true">Loading bundles…</p> : null}
      {loaded.state === 'error' ? (
        <p class="error" role="alert">
          Could not load bundles: {loaded.message}
        </p>
      ) : null}
      {loaded.state === 'ok'
        ? (() => {
            const rows = pendingAt(loaded.data.bundles, site);
            return rows.length === 0 ? (
              <p class="muted">None: every bundle for this site is placed, refused or expired.</p>
            ) : (
              <BundleRows
                rows={rows}
                now={now}
                go={go}
                showSite={false}
                label={`Pending bundles for ${site}`}
              />
            );
          })()
        : null}
    </>
  );
}
