import { bundleRows } from '../core/bundles.js';
import type { Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { useServices } from '../services.js';
import { BundleRows } from './BundleRows.js';

/** Bundles to outposts: every published bundle at every target site, with state, bytes and age. */
export function BundlesView({ go }: { go: (r: Route) => void }) {
  const { api } = useServices();
  const now = useNow();
  const [loaded] = useLoad(() => api.bundles(), [api]);
  if (loaded.state === 'loading') return <p aria-busy="true">Loading bundles…</p>;
  if (loaded.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load bundles: {loaded.message}
      </p>
    );
  const rows = bundleRows(loaded.data.bundles);
  return (
    <section aria-labelledby="bundles-title">
      <h1 id="bundles-title" class="view-title">
        Bundles to outposts
      </h1>
      {rows.length === 0 ? (
        <p>
          No bundles published yet. Publish one with{' '}
          <code>hub bundle publish --site &lt;site&gt; --name &lt;name&gt; &lt;file&gt;</code>.
        </p>
      ) : (
        <BundleRows rows={rows} now={now} go={go} showSite label="Bundles by site" />
      )}
    </section>
  );
}
