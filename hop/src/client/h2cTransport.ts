import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  constants,
  type IncomingHttpHeaders,
} from 'node:http2';
import { connect as netConnect } from 'node:net';
import { decoded, NULL_BODY, type PlainInit, pulled } from './plainRequest.js';

/** Most header bytes of an answer this client takes (HPACK-decoded), as Node's HTTP/1.1 parser's 16 KiB. */
const MAX_HEADER_LIST_BYTES = 16 * 1024;

/**
 * The upstream's port, or something on the way to it (an HTTP/1.1-only proxy), does not speak h2c: the
 * connection opened but the HTTP/2 preface was not answered with the server's settings. The exchange was
 * not carried; HTTP/1.1 may carry it.
 */
export class H2cRefusedError extends Error {
  readonly code = 'h2c-refused';
  constructor(detail: string) {
    super(`h2c is not spoken on the way to the upstream (${detail}): use HTTP/1.1 with it`);
    this.name = 'H2cRefusedError';
  }
}

interface Session {
  s: ClientHttp2Session;
  /** The TCP connection opened (a failure before it is the link's, not the protocol's). */
  connected: boolean;
  /** The server's SETTINGS arrived: it speaks HTTP/2. */
  settled: boolean;
  streams: number;
  error?: Error;
}

/**
 * HTTP/2 with prior knowledge (h2c) for `http:` upstreams (issue 46): one session per origin, kept across
 * rounds, so every exchange after the first sends its heads as a few bytes of HPACK. A session that closes,
 * is sent GOAWAY or fails is dropped, and one on which an exchange stalled is retired ({@link retire});
 * the next exchange connects again. No pings (an idle session costs
 * nothing but TCP keep-alive probes, as the HTTP/1.1 pool's). Answers as a web `Response`, as
 * {@link PlainTransport} does (the body read on demand, decoded from its `Content-Encoding`); an abort
 * signal cancels the stream (RST_STREAM), not the session.
 */
export class H2cTransport {
  private readonly sessions = new Map<string, Session>();

  request(url: string, init: PlainInit): Promise<Response> {
    const u = new URL(url);
    if (u.protocol !== 'http:') return Promise.reject(new Error(`${url}: h2c is for http: upstreams only`));
    if (init.signal?.aborted) return Promise.reject(init.signal.reason);
    const body = typeof init.body === 'string' ? Buffer.from(init.body) : init.body;
    const entry = this.session(u.origin);
    // the least a request needs: Node adds :scheme and :authority; no content type (decision 495)
    const headers: Record<string, string | number> = {
      ':method': init.method,
      ':path': `${u.pathname}${u.search}`,
      ...init.headers,
      ...(body ? { 'content-length': body.length } : {}),
    };
    return new Promise<Response>((resolve, reject) => {
      let stream: ClientHttp2Stream;
      try {
        stream = entry.s.request(headers, { ...(init.signal ? { signal: init.signal } : {}) });
      } catch (e) {
        reject(this.failure(entry, e));
        return;
      }
      this.opened(entry, stream);
      let answered = false;
      stream.once('response', (h: IncomingHttpHeaders) => {
        answered = true;
        try {
          resolve(toResponse(stream, h, init.method));
        } catch (e) {
          stream.close(constants.NGHTTP2_CANCEL);
          reject(e);
        }
      });
      stream.on('error', (e) => {
        if (!answered) reject(init.signal?.aborted ? init.signal.reason : this.failure(entry, e));
      });
      stream.once('close', () => {
        if (answered) return;
        const why = init.signal?.aborted
          ? init.signal.reason
          : this.failure(entry, new Error(`the h2c stream closed unanswered (code ${stream.rstCode})`));
        reject(why);
      });
      stream.end(body);
    });
  }

  /**
   * Takes no new stream on `origin`'s session: an exchange on it stalled (decision 515), and a path that
   * dropped the connection without a word would take every later exchange with it, as it took that one,
   * until TCP gives up (minutes). The next exchange connects again, as HTTP/1.1's next request takes a
   * new socket after a cut; streams still open on the old session (the other held pull) finish there or
   * are cut by their own deadlines, and the session closes after the last.
   */
  retire(origin: string): void {
    const known = this.sessions.get(origin);
    if (!known) return;
    this.sessions.delete(origin);
    if (!known.s.closed && !known.s.destroyed) known.s.close();
  }

  /** Closes every session (shutdown): their open streams end. */
  close(): void {
    for (const { s } of this.sessions.values()) s.destroy();
    this.sessions.clear();
  }

  /** The origin's live session, or a new one. */
  private session(origin: string): Session {
    const known = this.sessions.get(origin);
    if (known && !known.s.closed && !known.s.destroyed) return known;
    const s = connect(origin, {
      settings: { enablePush: false, maxHeaderListSize: MAX_HEADER_LIST_BYTES },
      maxHeaderListPairs: 128,
      createConnection: (u: URL) => {
        const socket = netConnect(Number(u.port || 80), u.hostname.replace(/^\[|\]$/g, ''));
        // as the HTTP/1.1 pool's sockets: a held pull's idle connection is probed about once a minute
        socket.setKeepAlive(true, 60_000);
        return socket;
      },
    });
    const entry: Session = { s, connected: false, settled: false, streams: 0 };
    this.sessions.set(origin, entry);
    const drop = () => {
      if (this.sessions.get(origin) === entry) this.sessions.delete(origin);
    };
    s.once('connect', () => {
      entry.connected = true;
    });
    s.once('remoteSettings', () => {
      entry.settled = true;
    });
    s.on('error', (e) => {
      entry.error = e;
      drop();
    });
    s.once('goaway', drop);
    s.once('close', drop);
    s.unref();
    return entry;
  }

  /** Keeps the process alive while a stream is open (not for an idle session). */
  private opened(entry: Session, stream: ClientHttp2Stream): void {
    if (entry.streams++ === 0) entry.s.ref();
    stream.once('close', () => {
      if (--entry.streams === 0 && !entry.s.destroyed) entry.s.unref();
    });
  }

  /** A connection that opened but never got the server's settings: not HTTP/2 there. */
  private failure(entry: Session, e: unknown): Error {
    const err = entry.error ?? (e instanceof Error ? e : new Error(String(e)));
    if (entry.connected && !entry.settled) {
      entry.s.destroy();
      return new H2cRefusedError((err as NodeJS.ErrnoException).code ?? err.message);
    }
    return err;
  }
}

function toResponse(stream: ClientHttp2Stream, h: IncomingHttpHeaders, method: string): Response {
  const status = Number(h[':status'] ?? 502);
  const headers = new Headers();
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || k.startsWith(':')) continue;
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, String(one));
  }
  const empty = NULL_BODY.has(status) || method === 'HEAD';
  if (empty) stream.resume();
  return new Response(empty ? null : pulled(decoded(stream, h['content-encoding'])), { status, headers });
}
