import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { refuseSocket } from './refuse.js';

/** Socket-level limits of a hop server (S8 in docs/architecture.md#invariants). */
export interface ConnectionLimits {
  /**
   * Most connections open at once from one client address; the next is answered 429
   * `too-many-requests` (with `Retry-After`) and closed before a byte of its request is read. Default 64.
   * Behind a reverse proxy every client shares the proxy's address: raise it there.
   */
  maxConnectionsPerClient?: number;
  /**
   * How long a client may take to send the request line and headers, ms (Node's `headersTimeout`);
   * past it the connection is answered 408 `request-timeout` and closed. Default 60 s: headers arrive in
   * one burst even over a link with minutes of delay, so only a client that dribbles them is cut.
   */
  headersTimeoutMs?: number;
  /** `Retry-After` of the 429 for too many connections, seconds. Default 5. */
  retryAfterS?: number;
}

/**
 * Answers an HTTP/1.1 request whose connection stays open without Node's `Connection: keep-alive` and
 * `Keep-Alive: timeout=` lines: staying open is HTTP/1.1's default, Node's own client reads the hint only
 * with an idle timeout of its own (ours has none), and the two lines are ~50 B of every answer on a
 * costly link (docs/decisions/390-long-holds.md). A connection Node closes is still closed.
 */
export function omitKeepAliveLines(req: IncomingMessage, res: ServerResponse): void {
  if (req.httpVersion === '1.1' && res.shouldKeepAlive) res.removeHeader('connection');
}

/** Node's timer that enforces `headersTimeout` must tick well within it. */
export function checkingIntervalMs(headersTimeoutMs: number): number {
  return Math.max(50, Math.min(30_000, Math.floor(headersTimeoutMs / 4)));
}

/**
 * Applies {@link ConnectionLimits} to `server`: a per-address connection cap (in front of Node's own
 * connection handling, so a refused socket never reaches the HTTP parser), the headers timeout, and a
 * `clientError` handler that answers malformed or late requests with a coded JSON error. Create the
 * server with `connectionsCheckingInterval: checkingIntervalMs(headersTimeoutMs)` so the timeout bites.
 * `onRefused` counts refused connections.
 */
export function applyConnectionLimits(
  server: Server,
  limits: ConnectionLimits,
  onRefused: () => void = () => {},
): void {
  const max = limits.maxConnectionsPerClient ?? 64;
  server.headersTimeout = limits.headersTimeoutMs ?? 60_000;
  const open = new Map<string, number>();
  // Refused sockets never reach Node's HTTP layer, so closeAllConnections would not see them.
  const refused = new Set<Socket>();
  const closeAll = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    closeAll();
    for (const s of refused) s.destroy();
  };
  const inner = server.listeners('connection') as ((s: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const key = socket.remoteAddress ?? 'unknown';
    const n = (open.get(key) ?? 0) + 1;
    if (n > max) {
      onRefused();
      refused.add(socket);
      socket.once('close', () => refused.delete(socket));
      refuseSocket(
        socket,
        'too-many-requests',
        `${max} connections are already open from ${key}; reuse them (keep-alive) or close some`,
        limits.retryAfterS ?? 5,
      );
      return;
    }
    open.set(key, n);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
    for (const l of inner) l.call(server, socket);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // As Node's default handler: answer only when no response has started on this socket.
    const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (err.code === 'ECONNRESET' || !socket.writable || started) {
      socket.destroy();
      return;
    }
    const code =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request-timeout'
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? 'headers-too-large'
          : 'bad-request';
    refuseSocket(socket, code, `the request could not be read (${err.code ?? 'malformed'})`, 0);
  });
}
