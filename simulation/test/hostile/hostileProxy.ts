import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { acceptH2c } from '@driftline/hop/testing';
import {
  type Attack,
  cleanHeaders,
  type HopRequest,
  type HopResponse,
  hostileHandler,
  readAll,
  type Seen,
} from '../../src/world/hostile/hostileHandler.js';

/**
 * The hostile hop on a socket: an HTTP proxy on 127.0.0.1:0 (HTTP/1.1 and h2c on one port) that forwards
 * every request to `target` on HTTP/1.1 through `hostileHandler` (simulation/src/world/hostile/hostileHandler.ts,
 * where the attacks' contract is described), for the hostile tests that still run as processes.
 */

export interface HostileProxy {
  url: string;
  port: number;
  /** The attack in force (null: honest). */
  use(attack: Attack | null): void;
  /** Every request seen, in order (method and path only). */
  seen: Seen;
  /** How many of them came on h2c (a stream of an HTTP/2 connection), not HTTP/1.1. */
  h2cRequests(): number;
  close(): Promise<void>;
}

function forward(target: URL, req: HopRequest): Promise<HopResponse> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.path,
        headers: { ...cleanHeaders(req.headers, req.body.length), host: target.host },
      },
      (res) => {
        readAll(res)
          .then((body) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body }))
          .catch(reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** Starts a proxy to `target` (`http://127.0.0.1:<port>`), honest until `use` gives it an attack. */
export async function startHostileProxy(target: string): Promise<HostileProxy> {
  const to = new URL(target);
  const { handle, use, seen, h2cRequests } = hostileHandler((req) => forward(to, req));
  const server: Server = createServer(handle);
  server.keepAliveTimeout = 1000;
  // h2c on the same port: the compatibility API's request and response stand in for HTTP/1.1's
  acceptH2c(server, (inc, out) => handle(inc as IncomingMessage, out as ServerResponse), {
    firstBytesTimeoutMs: 10_000,
    idleTimeoutMs: 1000,
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    use,
    seen,
    h2cRequests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
