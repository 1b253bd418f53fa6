import type Router from '@koa/router';
import type Koa from 'koa';
import type { Registry } from 'prom-client';
import type { ApiConfig } from '../../config.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';
import { auditRoute } from './auditRoute.js';
import type { HubAuth } from './auth.js';
import { sessionRoutes } from './sessionRoutes.js';
import { uiMiddleware } from './ui.js';

/** What the people's side serves besides sign-in and audit: the API routers, built by the hub. */
export interface PeopleSideDeps {
  auth: HubAuth;
  store: HubStore;
  clock: Clock;
  config: ApiConfig;
  csrfKey: Uint8Array;
  /** `/api/…` routers (matrix, runs, plan requests, events, bundles), mounted in this order. */
  routers: Router[];
  uiDir: string | null;
  /** Serve `/metrics` from this registry here (when the hop server does not serve it). */
  metricsRegistry?: Registry;
}

/**
 * Mounts the people's side on `app`: the auth guard first (every `/api…` and `/metrics` request passes
 * it), then sign-in, the audit log, the API routers, `/metrics` when asked, and the dashboard's files.
 */
export function mountPeopleSide(app: Koa, d: PeopleSideDeps): void {
  app.use(d.auth.guard());
  const sessions = sessionRoutes(d);
  app.use(sessions.routes());
  app.use(sessions.allowedMethods());
  const audit = auditRoute(d.store);
  app.use(audit.routes());
  for (const r of d.routers) {
    app.use(r.routes());
    app.use(r.allowedMethods());
  }
  const registry = d.metricsRegistry;
  if (registry)
    app.use(async (ctx, next) => {
      if (ctx.path !== '/metrics' || ctx.method !== 'GET') return next();
      ctx.type = registry.contentType;
      ctx.body = await registry.metrics();
    });
  app.use(uiMiddleware(d.uiDir));
}
