import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/**
 * One HTTP exchange with only the headers the caller names (plus `Host` and `Content-Length`), answered
 * as a web `Response`. Node's fetch adds its own to every request (`accept`,
 * `accept-language`, `sec-fetch-mode`, `user-agent`, and `pragma`/`cache-control` to a conditional
 * one): ~115 B that the hop API never reads, on every held pull of a quiet day
 * (docs/decisions/380-plain-hop-requests.md). As fetch does, a body sent with `Content-Encoding` gzip,
 * deflate or br is decoded as it is read (lazily: the caller's capped read bounds what is inflated).
 */
export interface PlainInit {
  method: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  signal?: AbortSignal;
}

/** The connection pools of one client: kept-alive sockets, TCP keep-alive probes after a minute idle. */
export class PlainTransport {
  /** As undici's default: a held pull's idle connection sends a probe (and gets an ACK) about once a minute. */
  private readonly http = new HttpAgent({ keepAlive: true, keepAliveMsecs: 60_000 });
  private readonly https = new HttpsAgent({ keepAlive: true, keepAliveMsecs: 60_000 });

  request(url: string, init: PlainInit): Promise<Response> {
    const u = new URL(url);
    const secure = u.protocol === 'https:';
    if (!secure && u.protocol !== 'http:')
      return Promise.reject(new Error(`${url}: only http: and https: upstreams are supported`));
    const body = typeof init.body === 'string' ? Buffer.from(init.body) : init.body;
    const headers: Record<string, string> = { ...init.headers };
    if (body) headers['content-length'] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const send = secure ? httpsRequest : httpRequest;
      const req = send(
        u,
        {
          method: init.method,
          headers,
          agent: secure ? this.https : this.http,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          try {
            resolve(toResponse(res, init.method));
          } catch (e) {
            res.destroy();
            reject(e);
          }
        },
      );
      // HTTP/1.1 keeps the connection without `Connection: keep-alive` (24 B a request; decision 390)
      req.removeHeader('connection');
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Closes the pooled connections (shutdown). */
  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/** Statuses whose answer has no body (RFC 9110), which a `Response` refuses one for. */
export const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function toResponse(res: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
  }
  const status = res.statusCode ?? 502;
  const empty = NULL_BODY.has(status) || method === 'HEAD';
  if (empty) res.resume();
  return new Response(empty ? null : pulled(decoded(res, res.headers['content-encoding'])), {
    status,
    statusText: res.statusMessage ?? '',
    headers,
  });
}

/**
 * A web stream over `body` that reads a chunk only when its reader asks (high-water mark 0): the socket
 * is paused in between, so a fast upstream cannot queue more than a chunk ahead of a capped reader
 * (`Readable.toWeb` in Node 20 queues whatever the socket delivers; docs/decisions/413-downlink-reads-stream.md).
 */
export function pulled(body: Readable): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value as Uint8Array);
      },
      async cancel(reason) {
        body.destroy(reason instanceof Error ? reason : undefined);
        await chunks.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/** The body as sent, or decoded from its `Content-Encoding` (one coding; any other is left as it came). */
export function decoded(res: Readable, contentEncoding: string | string[] | undefined): Readable {
  const coding = String(contentEncoding ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    coding === 'br'
      ? createBrotliDecompress()
      : coding === 'gzip' || coding === 'x-gzip'
        ? createGunzip()
        : coding === 'deflate'
          ? createInflate()
          : null;
  if (!decoder) return res;
  // errors of either end the decoded stream with that error (an abort, a corrupt body)
  pipeline(res, decoder, () => {});
  return decoder;
}
