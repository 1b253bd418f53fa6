import { createServer, type Server } from 'node:http';
import {
  applyConnectionLimits,
  type ConnectionLimits,
  checkingIntervalMs,
  closeServer,
  errorMiddleware,
  type HopBackend,
  healthHandler,
  listenOn,
} from '@driftline/hop';
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';

/** The listener of the people's side when it is apart from the hop API (`listen.api`). */
export interface ApiServer {
  server: Server;
  app: Koa;
  listen(port?: number, host?: string): Promise<{ port: number; url: string }>;
  close(): Promise<void>;
}

/**
 * A server for the people's side alone: `/api`, the dashboard, sign-in, `/metrics` (all mounted by
 * `mount`) and `GET /v1/health`; nothing else of the hop API. Same error rendering and per-client
 * connection limits as the hop server.
 */
export function createApiServer(
  backend: HopBackend,
  logger: Logger,
  mount: (app: Koa) => void,
  /** The same per-client connection cap and header time as the hop listener (hub.yaml `limits`). */
  limits: ConnectionLimits = {},
): ApiServer {
  const app = new Koa();
  app.silent = true;
  app.use(errorMiddleware(logger));
  const health = new Router();
  health.get('/v1/health', healthHandler(backend));
  app.use(health.routes());
  mount(app);
  const headersTimeoutMs = limits.headersTimeoutMs ?? 60_000;
  const server = createServer(
    { connectionsCheckingInterval: checkingIntervalMs(headersTimeoutMs) },
    app.callback(),
  );
  // No overall request timeout, as on the hop server; slow bodies are bounded where they are read.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 65_000;
  applyConnectionLimits(server, { ...limits, headersTimeoutMs });
  return {
    server,
    app,
    listen: (port, host) => listenOn(server, port, host),
    close: () => closeServer(server),
  };
}
