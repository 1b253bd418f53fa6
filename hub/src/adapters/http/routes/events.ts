import { API_PATHS, EventsQuerySchema } from '@driftline/protocol';
import { err, header, raw, ref } from '../openapiShared.js';
import { serveEvents } from '../sse.js';
import { route } from './route.js';

/** `/api/events`: the live feed the dashboard follows. */
export const eventRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.events,
    role: 'viewer',
    query: EventsQuerySchema,
    response: { status: 200, raw: raw('text/event-stream', 'each `data` is a HubEvent', ref('HubEvent')) },
    doc: {
      summary:
        'Server-Sent Events: cell-updated, site-updated, run-added, plan-request-updated, fleet-moved, ' +
        'fleet-judged (what time alone moved; at least every `withinS` seconds), and reset. Ids are ' +
        '`<epoch>-<seq>`, the epoch naming this run of the hub. Reconnect with Last-Event-ID to get what ' +
        'was missed; when that cannot be done (the hub restarted, the client fell behind, or the id is not ' +
        'one this hub gave) the stream starts with `reset`, and the client must re-read everything.',
      headers: [header('Last-Event-ID', 'the id of the last event seen')],
      conditional: false,
      others: { '400': err('bad query') },
    },
    handler: async (ctx, d) => {
      await serveEvents(ctx, d.events);
    },
  }),
];
