import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HealthSchema } from '@driftline/protocol';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import type { HopBackend } from '../ports/HopBackend.js';

/** `GET /v1/health`: the backend's readiness (503 when not ready), role, name, version and clock. */
export function healthHandler(backend: HopBackend): Middleware {
  return async (ctx) => {
    const h = await backend.health();
    const body: z.infer<typeof HealthSchema> & { detail?: string } = {
      ok: h.ok,
      role: backend.role,
      name: backend.name,
      version: backend.version,
      time: Date.now(),
      ...(h.detail ? { detail: h.detail } : {}),
    };
    ctx.status = h.ok ? 200 : 503;
    ctx.body = body;
  };
}

/** Listens on `host:port` (default 127.0.0.1, port 0) and resolves with the port and base URL. */
export function listenOn(
  server: Server,
  port = 0,
  host = '127.0.0.1',
): Promise<{ port: number; url: string }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      resolve({ port: a.port, url: `http://${host.includes(':') ? `[${host}]` : host}:${a.port}` });
    });
  });
}

/** Drops open connections and stops listening. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
