import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import { type ErrorCode, renderError, WireError } from '@driftline/protocol';

/** The challenge every 401 carries (RFC 9110 §11.6.1, RFC 6750 §3). */
export const AUTH_CHALLENGE = 'Bearer realm="driftline"';

/** Seconds a 429 or 503 asks the client to wait when the thrower named none. */
export const DEFAULT_RETRY_AFTER_S = 60;

/**
 * A wire error that says when to come back: rendered with `Retry-After: <retryAfterS>` (RFC 9110 §10.2.3).
 * Throw it for 429 and 503; a plain `WireError` with those codes gets {@link DEFAULT_RETRY_AFTER_S}.
 */
export class RetryLaterError extends WireError {
  constructor(
    code: ErrorCode,
    detail: string | undefined,
    readonly retryAfterS: number,
  ) {
    super(code, detail);
    this.name = 'RetryLaterError';
  }
}

/** The `Retry-After` value for an error: its own, else the default. */
export function retryAfterOf(e: unknown): number {
  const s = (e as { retryAfterS?: unknown } | undefined)?.retryAfterS;
  return typeof s === 'number' && s > 0 ? Math.ceil(s) : DEFAULT_RETRY_AFTER_S;
}

/** Headers every error response of `status` carries besides its body. */
export function errorHeaders(status: number, e?: unknown): Record<string, string> {
  if (status === 401) return { 'www-authenticate': AUTH_CHALLENGE };
  if (status === 429 || status === 503) return { 'retry-after': String(retryAfterOf(e)) };
  return {};
}

/**
 * True when the request body has not been read to its end. A refused request's body is never drained:
 * the response says `Connection: close` and Node closes the socket once it is sent (RFC 9112 §9.6), so
 * an unauthenticated client cannot make the server read gigabytes it will throw away.
 */
export function bodyUnread(req: IncomingMessage | Http2ServerRequest): boolean {
  return !req.complete;
}

/**
 * Lets a refused request's unread body go without draining it. HTTP/1.1: `Connection: close` on the
 * answer. HTTP/2 has no connection header (a compat response throws on one) and the connection carries
 * other exchanges: the stream alone is reset with NO_ERROR once the answer is sent (RFC 9113 §8.1).
 */
export function dropUnreadBody(
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
  setHeader: (name: string, value: string) => void,
): void {
  if (req.httpVersionMajor < 2) {
    closeAfterAnswer(req as IncomingMessage, setHeader);
    return;
  }
  const stream = (res as Http2ServerResponse).stream;
  res.once('finish', () => {
    if (!stream.closed) stream.close(constants.NGHTTP2_NO_ERROR);
  });
}

/** Answers `res` with an error from the ERRORS table and closes the connection when the body is unread. */
export function sendError(
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
  code: ErrorCode,
  detail?: string,
  extra: Record<string, string> = {},
): void {
  const r = renderError(code, detail);
  const body = JSON.stringify(r.body);
  if (bodyUnread(req) && req.httpVersionMajor < 2)
    closeAfterAnswer(req as IncomingMessage, (k, v) => (res as ServerResponse).setHeader(k, v));
  res.writeHead(r.status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    ...errorHeaders(r.status),
    ...extra,
  });
  res.end(body);
}

/** How long a refused HTTP/1.1 connection stays half-closed for its client to read the answer. */
const LINGER_MS = 2000;

/**
 * `Connection: close` on the answer, and a lingering close (RFC 9112 §9.6) for the connection whose request
 * body is unread: where Node would end
 * and destroy the socket as soon as the answer is sent, it ends it (FIN after the answer), stops reading
 * and destroys it when the client closes, or {@link LINGER_MS} later. Destroyed at once with the client's
 * bytes unread, the kernel resets the connection, and a client still sending (a large upload with a wrong
 * token) can lose the answer that says why: ECONNRESET instead of 401. Nothing more is read meanwhile: the
 * client's bytes fill the window and it waits.
 */
function closeAfterAnswer(req: IncomingMessage, setHeader: (name: string, value: string) => void): void {
  setHeader('Connection', 'close');
  const socket = req.socket;
  socket.destroySoon = () => {
    socket.end();
    socket.pause();
    destroyWithin(socket, LINGER_MS);
  };
}

/** Destroys `socket` `ms` from now unless it closed before. */
function destroyWithin(socket: Socket, ms: number): void {
  const t = setTimeout(() => socket.destroy(), ms);
  t.unref();
  socket.once('close', () => clearTimeout(t));
}

/**
 * Answers a raw socket that never reached the HTTP layer (too many connections from its address) with
 * a complete HTTP/1.1 error response, then closes it. The socket is destroyed after {@link LINGER_MS} at the
 * latest, so a client that never reads cannot keep it.
 */
export function refuseSocket(socket: Socket, code: ErrorCode, detail: string, retryAfterS: number): void {
  const r = renderError(code, detail);
  const body = JSON.stringify(r.body);
  const head = [
    `HTTP/1.1 ${r.status} ${code}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    ...(r.status === 429 || r.status === 503 ? [`retry-after: ${retryAfterS}`] : []),
    'connection: close',
  ].join('\r\n');
  socket.on('error', () => {});
  socket.end(`${head}\r\n\r\n${body}`);
  destroyWithin(socket, LINGER_MS);
}
