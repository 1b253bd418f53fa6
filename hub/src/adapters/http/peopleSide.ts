import Router from '@koa/router';
import type Koa from 'koa';
import type { Registry } from 'prom-client';
import type { ApiConfig } from '../../config.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';
import type { HubAuth } from './auth.js';
import { compression, weakEncodedEtags } from './compression.js';
import { conditionalGet } from './conditional.js';
import { openApiDocument } from './openapi.js';
import type { ApiDeps } from './routes/deps.js';
import { API_ROUTES } from './routes/index.js';
import { routerOf } from './routes/router.js';
import { signInLink } from './signInLink.js';
import { storeErrors } from './storeErrors.js';
import { uiMiddleware } from './ui.js';

/** What the people's side serves: the `/api` routes, sign-in, the dashboard's files, `/metrics`. */
export interface PeopleSideDeps {
  auth: HubAuth;
  store: HubStore;
  clock: Clock;
  config: ApiConfig;
  csrfKey: Uint8Array;
  /** What the `/api` handlers use (routes/index.ts), built by the hub. */
  api: ApiDeps;
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
 * `/api…` and `/metrics` request passes it), `/metrics` when asked, compression (br, gzip; weak ETags when
 * encoded), ETags and 304s on what follows, then
 * the sign-in link, the `/api` routes (generated from the route table) and the dashboard's files.
 */
export function mountPeopleSide(app: Koa, d: PeopleSideDeps): void {
  app.use(storeErrors());
  app.use(d.auth.guard());
  if (d.metricsRegistry) app.use(metricsRouter(d.metricsRegistry).routes());
  app.use(weakEncodedEtags());
  app.use(compression());
  app.use(conditionalGet());
  const link = signInLink(d);
  app.use(link.routes());
  app.use(link.allowedMethods());
  const api = routerOf(API_ROUTES, {
    ...d.api,
    auth: d.auth,
    config: d.config,
    csrfKey: d.csrfKey,
    openApi: () => openApiDocument(d.api.version),
  });
  app.use(api.routes());
  app.use(api.allowedMethods());
  app.use(uiMiddleware(d.uiDir));
}
