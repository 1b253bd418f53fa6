import { API_PATHS } from '@driftline/protocol';
import { relayInfos } from '../../../core/relayProblems.js';
import { route } from './route.js';

/** Most cells `GET /api/fleet` lists as needing attention; the counts cover the rest. */
export const ATTENTION_CAP = 200;

/**
 * `GET /api/fleet`: the landing view's summary from the read model's counts and the site rows, never
 * the cells (docs/decisions/400-fleet-read-model.md). Its size grows with sites and environments, not
 * cells: the attention list is capped at {@link ATTENTION_CAP}.
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
      // Peer rows are a few dozen: the relay rows of the grouped attention list (issue 44).
      return d.queries.fleet.fleet(now, ATTENTION_CAP, relayInfos(await d.store.listPeers(), now));
    },
  }),
];
