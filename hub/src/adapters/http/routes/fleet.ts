import { API_PATHS, type FleetSite, type FleetSiteInput, summariseFleet } from '@driftline/protocol';
import type { AgentRow } from '../../../ports/HubStore.js';
import { route } from './route.js';

/** Most cells `GET /api/fleet` lists as needing attention; the counts cover the rest. */
export const ATTENTION_CAP = 200;

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

/** Link facts of one site from its agents' last reports (revoked agents left out). */
function linkFacts(
  agents: readonly AgentRow[],
  upstream: string | null,
): Pick<
  FleetSite,
  'agents' | 'agentsHeardFrom' | 'queueDepth' | 'oldestUnsentAt' | 'upstream' | 'contactWindows'
> {
  const live = agents.filter((a) => a.revokedAt === null);
  const depths = live.map((a) => a.queueDepth).filter((x): x is number => x !== null);
  const unsent = live.map((a) => a.oldestUnsentAt).filter((x): x is number => x !== null);
  return {
    agents: live.length,
    agentsHeardFrom: live.filter((a) => a.lastContactAt !== null).length,
    queueDepth: depths.length ? depths.reduce((s, x) => s + x, 0) : null,
    oldestUnsentAt: iso(unsent.length ? Math.min(...unsent) : null),
    upstream,
    contactWindows: [...new Set(live.flatMap((a) => a.contactWindows))],
  };
}

/**
 * `GET /api/fleet`: the landing view's summary, computed from the matrix of default refs and the sites
 * as `Queries` reads them. Its size grows with sites and environments, not cells: the attention list is
 * capped at {@link ATTENTION_CAP}.
 */
export const fleetRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.fleet,
    role: 'viewer',
    response: { status: 200, schema: 'FleetResponse', description: 'fleet summary' },
    doc: {
      summary:
        'The fleet at a glance: counts by status, stale and unreachable per site and environment, link facts, worst cells first',
    },
    handler: async (_ctx, d) => {
      const now = d.clock.now();
      const [cells, sites, agents, siteRows] = await Promise.all([
        d.queries.matrix({}, now),
        d.queries.sites(now),
        d.store.listAgents(),
        d.store.listSites(),
      ]);
      const bySite = new Map<string, AgentRow[]>();
      for (const a of agents) bySite.set(a.site, [...(bySite.get(a.site) ?? []), a]);
      const upstream = new Map(siteRows.map((s) => [s.site, s.upstream]));
      const input: FleetSiteInput[] = sites.map((s) => ({
        ...s,
        ...linkFacts(bySite.get(s.site) ?? [], upstream.get(s.site) ?? null),
      }));
      return summariseFleet(cells, input, new Date(now).toISOString(), ATTENTION_CAP);
    },
  }),
];
