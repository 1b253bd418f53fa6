/**
 * Carriers for hop v2 messages in the budget bench (issue 46): one `POST /` per exchange, the message as
 * its body and the answer's messages as the answer's body, with the fewest heads each protocol allows.
 * HTTP/1.1 through `node:http` (the client's `Host`, `Connection` and `Content-Length`; the server's
 * `Content-Length` and `Connection`); h2c through `node:http2` with prior knowledge (HPACK keeps the
 * repeated heads to a few bytes within one connection).
 */
import { Agent, createServer, request } from 'node:http';
import { connect, createServer as createH2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';

export type Handler = (body: Uint8Array) => Promise<Uint8Array>;

export interface Carrier {
  send(body: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
}

const collect = (s: NodeJS.ReadableStream) =>
  new Promise<Uint8Array>((resolve, reject) => {
    const parts: Buffer[] = [];
    s.on('data', (c: Buffer) => parts.push(c));
    s.on('end', () => resolve(new Uint8Array(Buffer.concat(parts))));
    s.on('error', reject);
  });

/** A server of `handler` on 127.0.0.1 port 0: HTTP/1.1, or h2c. */
export async function serveV2(kind: 'http1' | 'h2c', handler: Handler) {
  if (kind === 'http1') {
    const server = createServer(async (req, res) => {
      const answer = await handler(await collect(req));
      res.sendDate = false;
      // Set by hand, Node adds no `Keep-Alive: timeout=…` line; HTTP/1.1 keeps the connection anyway.
      res.writeHead(200, { 'content-length': answer.length, connection: 'keep-alive' });
      res.end(answer);
    });
    server.keepAliveTimeout = 3_600_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      port: (server.address() as AddressInfo).port,
      close: () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    };
  }
  const server = createH2Server();
  server.on('stream', async (stream) => {
    const answer = await handler(await collect(stream));
    stream.respond({ ':status': 200 });
    stream.end(answer);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A client connection (HTTP/1.1 keep-alive, one socket; or one h2c session) to `port`. */
export function connectV2(kind: 'http1' | 'h2c', port: number): Carrier {
  if (kind === 'http1') {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    return {
      send: (body) =>
        new Promise((resolve, reject) => {
          const req = request(
            {
              host: '127.0.0.1',
              port,
              method: 'POST',
              path: '/',
              agent,
              headers: { 'content-length': body.length },
            },
            (res) => collect(res).then(resolve, reject),
          );
          req.on('error', reject);
          req.end(body);
        }),
      close: async () => agent.destroy(),
    };
  }
  const session = connect(`http://127.0.0.1:${port}`);
  return {
    send: (body) =>
      new Promise((resolve, reject) => {
        const req = session.request({ ':method': 'POST', ':path': '/' });
        collect(req).then(resolve, reject);
        req.end(body);
      }),
    close: () => new Promise<void>((r) => session.close(() => r())),
  };
}
