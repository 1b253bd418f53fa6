import { API_PATHS } from '@driftline/protocol';
import { relayInfos } from '../../../core/relayProblems.js';
import { route } from './route.js';

/**
 * `GET /api/relays`: each relay (peer name with a working token), the sites the hub lets it act for, when
 * it last used its token, the status it last reported (`POST /v1/status`, kept in its token's row) and
 * what is wrong there, each problem with the command that fixes it. One entry per peer name.
 */
export const relayRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.relays,
    role: 'viewer',
    response: { status: 200, schema: 'RelaysResponse', description: 'relays' },
    doc: {
      summary:
        'Each relay: the sites it acts for, its last token use, the status it last reported, and what is wrong there with the command that fixes it',
    },
    examples: [{ url: '/api/relays', status: 200 }],
    handler: async (_ctx, d) => ({ relays: relayInfos(await d.store.listPeers(), d.clock.now()) }),
  }),
];
