import { NO_FILTERS } from '../core/route.js';
import { linkProps, useRoute } from '../hooks/useRoute.js';
import { BundlesView } from './BundlesView.js';
import { CellView } from './CellView.js';
import { LiveAnnouncer } from './LiveAnnouncer.js';
import { MatrixView } from './MatrixView.js';
import { RunView } from './RunView.js';
import { SiteView } from './SiteView.js';
import { ThemeToggle } from './ThemeToggle.js';

/** The dashboard shell: header, live state, theme, and the view the URL names. */
export function App() {
  const [route, go] = useRoute();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" {...linkProps({ view: 'matrix', filters: NO_FILTERS, pivot: null }, go)}>
          Driftline
        </a>
        <nav aria-label="Breadcrumb" class="crumbs">
          {route.view !== 'matrix' ? (
            <a {...linkProps({ view: 'matrix', filters: NO_FILTERS, pivot: null }, go)}>Matrix</a>
          ) : null}
        </nav>
        <nav aria-label="Views" class="crumbs">
          <a
            {...linkProps({ view: 'bundles' }, go)}
            aria-current={route.view === 'bundles' ? 'page' : undefined}
          >
            Bundles
          </a>
        </nav>
        <span class="spacer" />
        <LiveAnnouncer />
        <ThemeToggle />
      </header>
      <main id="main">
        {route.view === 'matrix' ? <MatrixView filters={route.filters} pivot={route.pivot} go={go} /> : null}
        {route.view === 'site' ? <SiteView site={route.site} go={go} /> : null}
        {route.view === 'cell' ? (
          <CellView
            site={route.site}
            environment={route.environment}
            component={route.component}
            status={route.status}
            go={go}
          />
        ) : null}
        {route.view === 'run' ? <RunView runId={route.runId} go={go} /> : null}
        {route.view === 'bundles' ? <BundlesView go={go} /> : null}
      </main>
    </>
  );
}
