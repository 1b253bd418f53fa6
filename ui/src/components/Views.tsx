import type { Route } from '../core/route.js';
import { AuditView } from './AuditView.js';
import { CellView } from './CellView.js';
import { DriftView } from './DriftView.js';
import { LinksView } from './LinksView.js';
import { MatrixView } from './MatrixView.js';
import { NeedsView } from './NeedsView.js';
import { OverviewView } from './OverviewView.js';
import { PublicationsView } from './PublicationsView.js';
import { RunView } from './RunView.js';
import { SiteView } from './SiteView.js';

/** The view the URL names. */
export function Views({ route, go }: { route: Route; go: (r: Route, opts?: { replace?: boolean }) => void }) {
  switch (route.view) {
    case 'overview':
      return <OverviewView go={go} />;
    case 'links':
      return <LinksView go={go} />;
    case 'needs':
      return <NeedsView go={go} />;
    case 'matrix':
      return <MatrixView filters={route.filters} pivot={route.pivot} go={go} />;
    case 'site':
      return <SiteView site={route.site} go={go} />;
    case 'cell':
      return (
        <CellView
          site={route.site}
          environment={route.environment}
          component={route.component}
          status={route.status}
          cellRef={route.ref ?? null}
          go={go}
        />
      );
    case 'run':
      return <RunView runId={route.runId} go={go} />;
    case 'publications':
      return <PublicationsView go={go} />;
    case 'audit':
      return <AuditView />;
    case 'drift':
      return <DriftView signature={route.signature ?? null} go={go} />;
  }
}
