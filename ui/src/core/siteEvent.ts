import type { HubEvent } from '@driftline/protocol';

/**
 * Whether a live event may change what a view of `site` shows: anything the hub says about the site
 * (a result, a cell, its summary after each ingest, which is where an apply's journey moves), a plan
 * request of it, or a reset (everything must be read again).
 */
export function concernsSite(e: HubEvent, site: string): boolean {
  switch (e.type) {
    case 'cell-updated':
      return e.cell.site === site;
    case 'site-updated':
      return e.site.site === site;
    case 'run-added':
      return e.run.site === site;
    case 'plan-request-updated':
      return e.request.site === site;
    case 'reset':
      return true;
    default:
      return false;
  }
}
