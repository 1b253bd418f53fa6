import { publicationRows } from '../core/publications.js';
import type { Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { useServices } from '../services.js';
import { PublicationRows } from './PublicationRows.js';

/** Publications: every published file at every target site, with state, bytes and age. */
export function PublicationsView({ go }: { go: (r: Route) => void }) {
  const { api } = useServices();
  const now = useNow();
  const [loaded] = useLoad(() => api.publications(), [api]);
  if (loaded.state === 'loading') return <p aria-busy="true">Loading publications…</p>;
  if (loaded.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load publications: {loaded.message}
      </p>
    );
  const rows = publicationRows(loaded.data.publications);
  return (
    <section aria-labelledby="publications-title">
      <h1 id="publications-title" class="view-title">
        Publications to outposts
      </h1>
      {rows.length === 0 ? (
        <p>
          Nothing published yet. Publish a file with{' '}
          <code>hub publication publish --site &lt;site&gt; --name &lt;name&gt; &lt;file&gt;</code>.
        </p>
      ) : (
        <PublicationRows rows={rows} now={now} go={go} showSite label="Publications by site" />
      )}
    </section>
  );
}
