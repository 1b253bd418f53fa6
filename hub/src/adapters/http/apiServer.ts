import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyConnectionLimits, checkingIntervalMs, errorMiddleware, type HopBackend } from '@driftline/hop';
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
export function createApiServer(backend: HopBackend, logger: Logger, mount: (app: Koa) => void): ApiServer {
  const app = new Koa();
  app.silent = true;
  app.use(errorMiddleware(logger));
  const health = new Router();
  health.get('/v1/health', async (ctx) => {
    const h = await backend.health();
    ctx.status = h.ok ? 200 : 503;
    ctx.body = {
      ok: h.ok,
      role: backend.role,
      name: backend.name,
      version: backend.version,
      time: Date.now(),
      ...(h.detail ? { detail: h.detail } : {}),
    };
  });
  app.use(health.routes());
  mount(app);
  const headersTimeoutMs = 60_000;
  const server = createServer(
    { connectionsCheckingInterval: checkingIntervalMs(headersTimeoutMs) },
    app.callback(),
  );
  // A bundle upload over a slow link may take long: no overall request timeout (as on the hop server).
  server.requestTimeout = 0;
  server.keepAliveTimeout = 65_000;
  applyConnectionLimits(server, { headersTimeoutMs });
  return {
    server,
    app,
    listen: (port = 0, host = '127.0.0.1') =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const a = server.address() as AddressInfo;
          resolve({ port: a.port, url: `http://${host.includes(':') ? `[${host}]` : host}:${a.port}` });
        });
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
