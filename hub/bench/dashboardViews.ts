/**
 * fleetScale's views, from the dashboard's own list of calls (the UI's `Api` port): every read the
 * dashboard can make is timed here or named as not timed, so a call added to `Api` fails `npm run
 * typecheck` until it is one or the other (decision 565). Type-only: nothing of the UI runs.
 */
import { API_PATHS, fillPath } from '@driftline/protocol';
import type { Api } from '../../ui/src/ports/Api.js';

/** `Api` calls that write, sign in or out, or subscribe: not views. */
type Writes =
  | 'createPlanRequest'
  | 'submitApproval'
  | 'signIn'
  | 'signOut'
  | 'addWaiver'
  | 'removeWaiver'
  | 'onUnauthorized';

/** Every read of the dashboard's `Api`. */
export type DashboardRead = Exclude<keyof Api, Writes>;

/**
 * Each read's timed requests by name (a name is a key of fleetScale's `views` output), or why it is
 * not timed. `site` is a filled site and `windowSites` the sites of one matrix window.
 */
export function dashboardViews(
  site: string,
  windowSites: readonly string[],
): Record<DashboardRead, Record<string, string> | { untimed: string }> {
  return {
    fleet: { fleet: API_PATHS.fleet },
    sites: {
      sites: `${API_PATHS.sites}?limit=100`,
      sitesByProblems: `${API_PATHS.sites}?sort=problems&limit=100`,
    },
    matrix: {
      matrixWindow: `${API_PATHS.matrix}?environment=prod&sites=${windowSites.join(',')}`,
      matrixDrift: `${API_PATHS.matrix}?status=drift`,
      matrixFailed: `${API_PATHS.matrix}?status=failed`,
      matrixEnvironmentPage: `${API_PATHS.matrix}?environment=prod`,
    },
    needs: { needs: API_PATHS.needs },
    refs: { refs: API_PATHS.refs },
    site: { site: fillPath(API_PATHS.site, { site }) },
    runs: { cellRuns: fillPath(API_PATHS.runs, { site, environment: 'prod', component: 'comp-0' }) },
    relays: { relays: API_PATHS.relays },
    planRequests: { planRequests: API_PATHS.planRequests },
    publications: { publications: API_PATHS.publications },
    approvers: { approvers: API_PATHS.approvers },
    audit: { audit: API_PATHS.audit },
    driftGroups: { driftGroups: API_PATHS.driftGroups },
    drift: { drift: API_PATHS.drift },
    waivers: { waivers: API_PATHS.waivers },
    run: { untimed: 'one run by id: a primary-key read, whatever the fleet' },
    approvals: { untimed: "one run's approvals: read by (site, run id)" },
    session: { untimed: 'who is signed in: no fleet read' },
  };
}

/** The timed requests of {@link dashboardViews}, by name. */
export function timedViews(site: string, windowSites: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of Object.values(dashboardViews(site, windowSites)))
    if (!('untimed' in v)) Object.assign(out, v);
  return out;
}
