import { type CellStatus, CellStatusSchema } from '@driftline/protocol';

/**
 * Every view is a URL (so a view can be bookmarked, shared and reloaded): the hub serves the UI at `/`, so the view and its filters live in the
 * query string (`/?view=site&site=ship-7`), which any static server answers with index.html.
 */

export interface Filters {
  /** Exact site id, or '' for all. */
  site: string;
  /** Exact environment, or '' for all. */
  environment: string;
  /** Free text matched against component names (case-insensitive substring). */
  q: string;
  status: CellStatus | null;
  staleOnly: boolean;
  /** ISO time for the point-in-time matrix, or null for now. */
  at: string | null;
  /** The ref whose plans the matrix shows (`pr/42`), or null for each component's default ref. */
  ref: string | null;
}

export type Route =
  | { view: 'overview' }
  | { view: 'matrix'; filters: Filters; pivot: string | null }
  | { view: 'links' }
  | { view: 'needs' }
  | { view: 'site'; site: string }
  | {
      view: 'cell';
      site: string;
      environment: string;
      component: string;
      status: CellStatus | null;
      /** The ref of the cell's plans; absent or null: the default ref. */
      ref?: string | null;
    }
  | { view: 'run'; runId: string }
  | { view: 'publications' }
  | { view: 'audit' }
  | { view: 'drift'; signature?: string };

export const NO_FILTERS: Filters = {
  site: '',
  environment: '',
  q: '',
  status: null,
  staleOnly: false,
  at: null,
  ref: null,
};

/** Query parameters that belong to the matrix: any of them without `view` names the matrix. */
const MATRIX_PARAMS = ['pivot', 'site', 'env', 'q', 'status', 'stale', 'at', 'ref'];

function statusParam(v: string | null): CellStatus | null {
  const parsed = CellStatusSchema.safeParse(v);
  return parsed.success ? parsed.data : null;
}

function atParam(v: string | null): string | null {
  if (!v) return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/**
 * Reads a route from a query string; unknown or malformed parameters fall back to defaults. No
 * parameters at all is the fleet overview (the landing view); matrix parameters alone name the matrix,
 * so `/?ref=pr/42` and `/?status=failed` are matrices.
 */
export function parseRoute(search: string): Route {
  const p = new URLSearchParams(search);
  const view = p.get('view') ?? (MATRIX_PARAMS.some((k) => p.has(k)) ? 'matrix' : 'overview');
  if (view === 'overview') return { view: 'overview' };
  if (view === 'links') return { view: 'links' };
  if (view === 'needs') return { view: 'needs' };
  if (view === 'site' && p.get('site')) return { view: 'site', site: p.get('site')! };
  if (view === 'cell' && p.get('site') && p.get('env') && p.get('comp')) {
    return {
      view: 'cell',
      site: p.get('site')!,
      environment: p.get('env')!,
      component: p.get('comp')!,
      status: statusParam(p.get('status')),
      ...(p.get('ref') ? { ref: p.get('ref') } : {}),
    };
  }
  if (view === 'run' && p.get('run')) return { view: 'run', runId: p.get('run')! };
  // `bundles` is the view's name before decision 170: links saved then still open it.
  if (view === 'publications' || view === 'bundles') return { view: 'publications' };
  if (view === 'audit') return { view: 'audit' };
  if (view === 'drift') return p.get('sig') ? { view: 'drift', signature: p.get('sig')! } : { view: 'drift' };
  return {
    view: 'matrix',
    pivot: p.get('pivot') || null,
    filters: {
      site: p.get('site') ?? '',
      environment: p.get('env') ?? '',
      q: p.get('q') ?? '',
      status: statusParam(p.get('status')),
      staleOnly: p.get('stale') === '1',
      at: atParam(p.get('at')),
      ref: p.get('ref') || null,
    },
  };
}

/** The query string (with leading `?`, or '' for the default view) for a route. */
export function formatRoute(route: Route): string {
  const p = new URLSearchParams();
  switch (route.view) {
    case 'matrix': {
      const f = route.filters;
      if (route.pivot) p.set('pivot', route.pivot);
      if (f.site) p.set('site', f.site);
      if (f.environment) p.set('env', f.environment);
      if (f.q) p.set('q', f.q);
      if (f.status) p.set('status', f.status);
      if (f.staleOnly) p.set('stale', '1');
      if (f.at) p.set('at', f.at);
      if (f.ref) p.set('ref', f.ref);
      // The matrix without parameters must say so: no parameters at all is the overview.
      if (p.toString() === '') p.set('view', 'matrix');
      break;
    }
    case 'overview':
      break;
    case 'links':
    case 'needs':
      p.set('view', route.view);
      break;
    case 'site':
      p.set('view', 'site');
      p.set('site', route.site);
      break;
    case 'cell':
      p.set('view', 'cell');
      p.set('site', route.site);
      p.set('env', route.environment);
      p.set('comp', route.component);
      if (route.status) p.set('status', route.status);
      if (route.ref) p.set('ref', route.ref);
      break;
    case 'run':
      p.set('view', 'run');
      p.set('run', route.runId);
      break;
    case 'publications':
      p.set('view', 'publications');
      break;
    case 'audit':
      p.set('view', 'audit');
      break;
    case 'drift':
      p.set('view', 'drift');
      if (route.signature) p.set('sig', route.signature);
      break;
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Whether the hub sent the browser back from a sign-in link it refused (`/?signin=failed`). */
export function signInFailed(search: string): boolean {
  return new URLSearchParams(search).get('signin') === 'failed';
}

/** The query string without the hub's `signin` marker, so a reload does not repeat its message. */
export function withoutSignInMarker(search: string): string {
  const p = new URLSearchParams(search);
  p.delete('signin');
  const s = p.toString();
  return s ? `?${s}` : '';
}
