import { API_PATHS } from '@driftline/protocol';
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
    handler: async (_ctx, d) => d.queries.fleet.fleet(d.clock.now(), ATTENTION_CAP),
  }),
];
