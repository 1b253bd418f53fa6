import { RelaysResponseSchema } from '@driftline/protocol';
import Router from '@koa/router';
import { relayInfos } from '../../core/relayProblems.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';

/**
 * `GET /api/relays` (viewer): each relay (peer name with a working token), the sites the hub lets it act
 * for, when it last used its token, the status it last reported (`POST /v1/status`, kept in its token's
 * row) and what is wrong there, each problem with the command that fixes it. One entry per peer name.
 */
export function relaysRouter(d: { store: HubStore; clock: Clock }): Router {
  const r = new Router({ prefix: '/api' });
  r.get('/relays', async (ctx) => {
    ctx.body = RelaysResponseSchema.parse({ relays: relayInfos(await d.store.listPeers(), d.clock.now()) });
  });
  return r;
}
