import Router from '@koa/router';
import type Koa from 'koa';
import type { Registry } from 'prom-client';
import type { ApiConfig } from '../../config.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';
import { auditRoute } from './auditRoute.js';
import type { HubAuth } from './auth.js';
import { conditionalGet } from './conditional.js';
import { sessionRoutes } from './sessionRoutes.js';
import { storeErrors } from './storeErrors.js';
import { uiMiddleware } from './ui.js';

/** What the people's side serves besides sign-in and audit: the API routers, built by the hub. */
export interface PeopleSideDeps {
  auth: HubAuth;
  store: HubStore;
  clock: Clock;
  config: ApiConfig;
  csrfKey: Uint8Array;
  /** `/api/…` routers (matrix, runs, plan requests, events, publications), mounted in this order. */
  routers: Router[];
  uiDir: string | null;
  /** Serve `/metrics` from this registry here (when the hop server does not serve it). */
  metricsRegistry?: Registry;
}

/** `GET /metrics` from `registry` (the hop server serves it instead when one listener serves both). */
export function metricsRouter(registry: Registry): Router {
  const r = new Router();
  r.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  return r;
}

/**
 * Mounts the people's side on `app`: store errors that pass become 503/507, then the auth guard (every
 * `/api…` and `/metrics` request passes it), `/metrics` when asked, ETags and 304s on what follows, then
 * sign-in, the audit log, the API routers and the dashboard's files.
 */
export function mountPeopleSide(app: Koa, d: PeopleSideDeps): void {
  app.use(storeErrors());
  app.use(d.auth.guard());
  if (d.metricsRegistry) app.use(metricsRouter(d.metricsRegistry).routes());
  app.use(conditionalGet());
  const sessions = sessionRoutes(d);
  app.use(sessions.routes());
  app.use(sessions.allowedMethods());
  const audit = auditRoute(d.store);
  app.use(audit.routes());
  app.use(audit.allowedMethods());
  for (const r of d.routers) {
    app.use(r.routes());
    app.use(r.allowedMethods());
  }
  app.use(uiMiddleware(d.uiDir));
}
