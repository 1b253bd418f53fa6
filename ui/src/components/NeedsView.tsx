import { cellKey } from '@driftline/protocol';
import type { Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { linkProps } from '../hooks/useRoute.js';
import { useServices } from '../services.js';
import { RelTime } from './RelTime.js';

/**
 * What sites lack before they can plan (`GET /api/needs`): per site and need, the cells blocked on it.
 * Each need is something headquarters can send (a provider build, a commit of a repository).
 */
export function NeedsView({ go }: { go: (r: Route) => void }) {
  const { api } = useServices();
  const now = useNow();
  const [loaded] = useLoad(() => api.needs(), [api]);
  return (
    <section aria-labelledby="needs-title">
      <h1 id="needs-title" class="view-title">
        <span class="st-blocked" aria-hidden="true">
          ⊟
        </span>{' '}
        What sites need to plan
      </h1>
      {loaded.state === 'loading' ? <p aria-busy="true">Loading needs…</p> : null}
      {loaded.state === 'error' ? (
        <p class="error" role="alert">
          Could not load what sites need: {loaded.message}
        </p>
      ) : null}
      {loaded.state === 'ok' && loaded.data.needs.length === 0 ? (
        <p>No plan is blocked: every site has what its plans need.</p>
      ) : null}
      {loaded.state === 'ok' && loaded.data.needs.length > 0 ? (
        <>
          <table class="table">
            <caption class="sr-only">Needs by site, with the cells waiting for each</caption>
            <thead>
              <tr>
                <th scope="col">site</th>
                <th scope="col">needs</th>
                <th scope="col">cells waiting</th>
                <th scope="col">since</th>
              </tr>
            </thead>
            <tbody>
              {loaded.data.needs.map((n) => (
                <tr key={`${n.site} ${n.need}`}>
                  <th scope="row">
                    <a {...linkProps({ view: 'site', site: n.site }, go)}>{n.site}</a>
                  </th>
                  <td>
                    <code>{n.need}</code>
                  </td>
                  <td>
                    <ul class="plain">
                      {n.cells.map((c) => (
                        <li key={cellKey(c.environment, c.component, c.ref)}>
                          <a
                            {...linkProps(
                              {
                                view: 'cell',
                                site: n.site,
                                environment: c.environment,
                                component: c.component,
                                status: null,
                                ...(c.ref ? { ref: c.ref } : {}),
                              },
                              go,
                            )}
                          >
                            {c.environment} / {c.component}
                            {c.ref ? ` @ ${c.ref}` : ''}
                          </a>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>{n.since ? <RelTime iso={n.since} now={now} /> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="muted small">
            Send a provider build with <code>hub publication publish --kind provider-mirror</code>, a
            repository's commits with <code>hub source publish</code> (a git bundle); the blocked cells plan
            again once the site holds them.
          </p>
        </>
      ) : null}
    </section>
  );
}
