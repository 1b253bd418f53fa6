import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One response that went back through the tap: what was asked, when, and its bytes (head + body). */
export interface TappedResponse {
  /** When the request arrived at the tap, and when its response was finished. */
  start: number;
  at: number;
  /** Bytes of the request's body. */
  reqBytes: number;
  /** Bytes of the request's line and headers as they reached the tap. */
  reqHeadBytes: number;
  method: string;
  path: string;
  status: number;
  bytes: number;
  /** The response body as sent (still encoded) and its `Content-Encoding`, where `keepBody` asked for it. */
  body?: Buffer;
  encoding?: string;
  /** The response's header names and the bytes of each line, where `keepBody` asked for it. */
  headLines?: Record<string, number>;
  /** The request's body as sent (still encoded) and its header lines (name → value), where `keepBody` asked. */
  reqBody?: Buffer;
  reqHeaders?: [string, string][];
  /** The response's header lines (name → value), where `keepBody` asked. */
  ansHeaders?: [string, string][];
}

/**
 * A plain HTTP/1.1 forwarder in front of `targetPort` that records each response's size (status line,
 * headers as the target sent them, body), so bytes on a link can be told apart by request (a bundle
 * fetch vs sync polling). Headers and bodies go through unchanged; a request that fails is kept with
 * status 0.
 */
export async function startHttpTap(
  targetPort: number,
  now: () => number = () => performance.now(),
  keepBody: (method: string, path: string) => boolean = () => false,
) {
  const responses: TappedResponse[] = [];
  const server = createServer((req, res) => {
    const start = now();
    let reqBytes = 0;
    let reqHeadBytes = `${req.method} ${req.url} HTTP/1.1\r\n`.length + 2;
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
      reqHeadBytes += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`.length;
    const keep = keepBody(req.method ?? '', req.url ?? '');
    const reqKept: Buffer[] | null = keep ? [] : null;
    const pairs = (raw: string[]) =>
      raw.flatMap((v, i, a): [string, string][] => (i % 2 === 0 ? [[v, a[i + 1] ?? '']] : []));
    req.on('data', (c: Buffer) => {
      reqBytes += c.length;
      reqKept?.push(c);
    });
    const up = request(
      {
        host: '127.0.0.1',
        port: targetPort,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (ur) => {
        let bytes = `HTTP/1.1 ${ur.statusCode} ${ur.statusMessage ?? ''}\r\n`.length + 2;
        for (let i = 0; i + 1 < ur.rawHeaders.length; i += 2)
          bytes += `${ur.rawHeaders[i]}: ${ur.rawHeaders[i + 1]}\r\n`.length;
        res.writeHead(ur.statusCode ?? 502, ur.statusMessage, ur.rawHeaders);
        const kept: Buffer[] | null = keep ? [] : null;
        ur.on('data', (c: Buffer) => {
          bytes += c.length;
          kept?.push(c);
        });
        ur.on('end', () =>
          responses.push({
            start,
            at: now(),
            reqBytes,
            reqHeadBytes,
            method: req.method ?? '',
            path: req.url ?? '',
            status: ur.statusCode ?? 0,
            bytes,
            ...(kept
              ? {
                  body: Buffer.concat(kept),
                  encoding: String(ur.headers['content-encoding'] ?? 'identity'),
                  reqBody: Buffer.concat(reqKept ?? []),
                  reqHeaders: pairs(req.rawHeaders),
                  ansHeaders: pairs(ur.rawHeaders),
                  headLines: Object.fromEntries(
                    ur.rawHeaders.flatMap((v, i, a) =>
                      i % 2 === 0 ? [[v, `${v}: ${a[i + 1]}\r\n`.length]] : [],
                    ),
                  ),
                }
              : {}),
          }),
        );
        ur.pipe(res);
      },
    );
    up.on('error', () => {
      responses.push({
        start,
        at: now(),
        reqBytes,
        reqHeadBytes,
        method: req.method ?? '',
        path: req.url ?? '',
        status: 0,
        bytes: 0,
      });
      res.destroy();
    });
    req.on('aborted', () => up.destroy());
    req.pipe(up);
  });
  // As the relay's hop server (hop/src/server.ts): idle connections kept an hour, no request timeout.
  // Node's default 5 s would close them before a request crossing a 12 s link arrives.
  server.keepAliveTimeout = 3_600_000;
  server.requestTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    responses,
    /** Bytes of responses finished in (from, to], by a predicate on the request. */
    bytes(from: number, to: number, f: (r: TappedResponse) => boolean): number {
      return responses.filter((r) => r.at > from && r.at <= to && f(r)).reduce((n, r) => n + r.bytes, 0);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
