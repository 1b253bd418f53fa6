import { RelaysResponseSchema } from '@driftline/protocol';
import Router from '@koa/router';
import { type KeptStatus, relayInfos } from '../../core/relayProblems.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';

/**
 * `GET /api/relays` (viewer): each relay (peer name with a working token), the sites the hub lets it act
 * for, when it last used its token, the status it last reported (`POST /v1/status`) and what is wrong
 * there, each problem with the command that fixes it. At most one entry per peer name.
 */
export function relaysRouter(d: {
  store: HubStore;
  clock: Clock;
  statuses: ReadonlyMap<string, KeptStatus>;
}): Router {
  const r = new Router({ prefix: '/api' });
  r.get('/relays', async (ctx) => {
    const now = d.clock.now();
    ctx.body = RelaysResponseSchema.parse({ relays: relayInfos(await d.store.listPeers(), d.statuses, now) });
  });
  return r;
}
