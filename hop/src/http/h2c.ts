import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  createServer as createH2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from 'node:http2';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';

/** What an HTTP/2 client with prior knowledge sends first (RFC 9113 §3.4). */
export const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Streams one h2c connection may have open at once: a few held pulls and a push (an agent keeps two). */
const MAX_STREAMS = 32;
/** The most header bytes a request may carry, as Node's HTTP/1.1 parser's default (16 KiB). */
const MAX_HEADER_LIST_BYTES = 16 * 1024;

/** Options of {@link acceptH2c}. */
export interface H2cOptions {
  /** How long a connection may take to send its first bytes, ms (as the HTTP/1.1 headers timeout). */
  firstBytesTimeoutMs: number;
  /** How long an h2c connection with no stream open stays, ms (as the HTTP/1.1 keep-alive timeout). */
  idleTimeoutMs: number;
}

type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/**
 * Serves HTTP/2 with prior knowledge (h2c) on `server`'s own port, beside HTTP/1.1, by a first-bytes
 * switch (issue 46): each connection's first bytes are read; the HTTP/2 preface goes to a `node:http2`
 * server running `handler`, anything else back to `server` as it came (the bytes unshifted). Node's
 * cleartext http2 server takes no HTTP/1.1, and its session reads the socket's handle directly (bytes
 * already read would be lost), so an h2c socket is handed over wrapped in a stream that gives them first.
 * Install before `applyConnectionLimits`, so h2c connections count against a client's address too.
 * `server.closeAllConnections()` closes h2c sessions and undecided sockets as well.
 */
export function acceptH2c(server: Server, handler: Handler, o: H2cOptions): void {
  const h2 = createH2Server(
    {
      settings: { maxConcurrentStreams: MAX_STREAMS, maxHeaderListSize: MAX_HEADER_LIST_BYTES },
      maxHeaderListPairs: 128,
    },
    handler as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  );
  const sessions = new Set<Http2Session>();
  const undecided = new Set<Socket>();
  let handing: Socket | null = null;
  h2.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.on('error', () => {}); // a client gone mid-frame: its streams close, nothing to log
    if (handing) keepAddress(session, handing);
    closeWhenIdle(session, o.idleTimeoutMs);
  });

  const http1 = server.listeners('connection') as ((s: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    undecided.add(socket);
    const timer = setTimeout(() => socket.destroy(), o.firstBytesTimeoutMs);
    timer.unref();
    let head = Buffer.alloc(0);
    const decide = (h2c: boolean) => {
      clearTimeout(timer);
      undecided.delete(socket);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('end', onEnd);
      socket.off('error', onError);
      socket.pause();
      if (h2c) {
        handing = socket;
        h2.emit('connection', new PrefacedSocket(socket, head));
        handing = null;
      } else {
        socket.unshift(head);
        for (const l of http1) l.call(server, socket);
        socket.resume();
      }
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, H2_PREFACE.length);
      // the first byte that differs from the preface decides HTTP/1.1; all 24 equal, h2c
      if (!head.subarray(0, n).equals(H2_PREFACE.subarray(0, n))) decide(false);
      else if (n === H2_PREFACE.length) decide(true);
    };
    const onClose = () => {
      clearTimeout(timer);
      undecided.delete(socket);
    };
    // the server is half-open (as Node's HTTP server): a client that ends before its first bytes decide
    // is closed here, or its socket would stay and count against its address
    const onEnd = () => socket.destroy();
    // a client reset before its first bytes decide (a flaky link, a port scan) is dropped, as Node's HTTP
    // server drops one: unheard, the socket's error was uncaught and stopped the whole relay or hub
    const onError = () => socket.destroy();
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('end', onEnd);
    socket.on('error', onError);
  });

  const closeAll = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    closeAll();
    for (const s of undecided) s.destroy();
    for (const s of sessions) s.destroy();
  };
}

/**
 * Closes an h2c session that has had no stream open for `ms`: a held pull may be silent for hours
 * (HTTP/2's own timeout would cut it), an idle connection goes as HTTP/1.1's keep-alive timeout does.
 */
function closeWhenIdle(session: Http2Session, ms: number): void {
  let open = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => session.close(), ms);
    timer.unref();
  };
  arm();
  session.on('stream', (stream) => {
    open++;
    clearTimeout(timer);
    stream.once('close', () => {
      open--;
      if (open === 0 && !session.closed) arm();
    });
  });
  session.once('close', () => clearTimeout(timer));
}

/** The client's address on the h2c requests, as on HTTP/1.1 ones (the wrapper has none of its own). */
function keepAddress(session: Http2Session, raw: Socket): void {
  const { remoteAddress, remotePort, remoteFamily } = raw;
  try {
    Object.defineProperties(session.socket, {
      remoteAddress: { value: remoteAddress },
      remotePort: { value: remotePort },
      remoteFamily: { value: remoteFamily },
    });
  } catch {
    // not definable on this Node: the address stays unknown (only logs and proxy checks read it)
  }
}

/** A socket's stream with the bytes already read from it put back in front. */
class PrefacedSocket extends Duplex {
  constructor(
    private readonly socket: Socket,
    first: Buffer,
  ) {
    super();
    this.push(first);
    socket.on('data', (c: Buffer) => {
      if (!this.push(c)) socket.pause();
    });
    socket.once('end', () => this.push(null));
    socket.once('close', () => this.destroy());
    socket.on('error', (e) => this.destroy(e));
  }
  override _read(): void {
    this.socket.resume();
  }
  override _write(chunk: Buffer, _e: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.socket.write(chunk, cb);
  }
  override _final(cb: (e?: Error | null) => void): void {
    this.socket.end();
    cb();
  }
  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    this.socket.destroy();
    cb(err);
  }
}
