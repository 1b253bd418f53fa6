import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

/**
 * A hostile hop: it sits where a relay would (between agents and an honest relay, or between a relay and
 * its upstream) and forwards every request, letting attacks read and rewrite each request and response on
 * the way; on a socket (`startHostileProxy` in simulation/test/hostile/hostileProxy.ts), as a node of the
 * hostile suite's world (`virtualWorld.ts`), or in front of the deterministic world's relay (the `hostile`
 * fault, `hostileFaults.ts`). It holds whole bodies in memory (capped), so it
 * sees a batch, a tus PATCH or a downlink page as one piece.
 *
 * How to add an attack: write an `Attack` (a name plus `onRequest` and/or `onResponse`) and pass it to
 * `hop.use(attack)`; `hop.use(null)` makes the hop honest again (the "honest path exists" moment).
 * - `onRequest` returns `undefined` to forward unchanged, `{ forward: req }` to forward a changed request
 *   (method, path, headers, body), or `{ answer: res }` to answer itself without forwarding anything
 *   (fake a tus completion, eat a downlink pull).
 * - `onResponse` sees the upstream's answer and returns `undefined` or a changed response.
 * - `takeOver` gets the raw response before anything is read, for attacks on timing (hold, drip);
 *   `takeOverRead` the same once the request's body is read (a v2 pull is told from a push by its body).
 * - Count what the attack did in the attack itself (a closure), and assert it in the test: an attack that
 *   never fired proves nothing.
 * Headers are lower-case (node's); `content-length` and `transfer-encoding` are recomputed by the proxy.
 *
 * On a socket it speaks h2c beside HTTP/1.1, as a relay does (decision 495): an agent on hop v2 carries its
 * exchanges to it on h2c, the default, and the attacks see them there (each request a stream of the one
 * connection; `out` is then Node's HTTP/2 compatibility response).
 */

export interface HopRequest {
  method: string;
  /** Path and query, as sent (`/v1/bundles?for=ship-7&after=…`). */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface HopResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type RequestVerdict = undefined | { forward: HopRequest } | { answer: HopResponse };

export interface Attack {
  name: string;
  /**
   * Takes the request over before its body is read: answer (or never answer) on `out` as the attack
   * likes, byte by byte if it will (a pull held without a word, an answer dripped). True: the proxy does
   * nothing more with it.
   */
  takeOver?(req: { method: string; path: string }, out: ServerResponse): boolean;
  /** As `takeOver`, once the request's body is read (hop v2 exchanges all go to `POST /v2`). */
  takeOverRead?(req: HopRequest, out: ServerResponse): boolean;
  onRequest?(req: HopRequest): RequestVerdict | Promise<RequestVerdict>;
  onResponse?(req: HopRequest, res: HopResponse): HopResponse | undefined | Promise<HopResponse | undefined>;
}

/** Largest body the hop holds (request or response): tests move small plans. */
const MAX_BODY = 64 * 1024 * 1024;
/** Headers of one connection, not of the exchange: a hop does not pass them on. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'host',
]);

/** Every request a hop saw, in order (method and path only; status 0: taken over by the attack). */
export type Seen = Array<{ method: string; path: string; status: number }>;

export async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of stream) {
    const b = chunk as Buffer;
    n += b.length;
    if (n > MAX_BODY) throw new Error(`hostile proxy: a body over ${MAX_BODY} bytes (raise MAX_BODY)`);
    parts.push(b);
  }
  return Buffer.concat(parts);
}

export function cleanHeaders(h: IncomingHttpHeaders, bodyLength: number): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  // HTTP/2's pseudo-headers (`:method`, `:path`, …) are the request line's, not headers to pass on
  for (const [k, v] of Object.entries(h))
    if (!HOP_BY_HOP.has(k) && !k.startsWith(':') && v !== undefined) out[k] = v;
  out['content-length'] = String(bodyLength);
  return out;
}

/** What a hostile hop does with each exchange, whatever carries it: a socket, or the world's network. */
export interface HostileHandler {
  handle(inc: IncomingMessage, out: ServerResponse): void;
  use(attack: Attack | null): void;
  seen: Seen;
  h2cRequests(): number;
}

/**
 * The attacks' hop, forwarding by `forward`: the proxy on a port of 127.0.0.1 (`startHostileProxy`), a node
 * of the hostile suite's world (`virtualWorld.ts`) whose forward is the world's network, or the front of
 * the deterministic world's relay (`hostileFaults.ts`) whose forward is the relay's own listener.
 */
export function hostileHandler(forward: (req: HopRequest) => Promise<HopResponse>): HostileHandler {
  let attack: Attack | null = null;
  const seen: Seen = [];
  let h2c = 0;
  const handle = (inc: IncomingMessage, out: ServerResponse) => {
    if (inc.httpVersionMajor === 2) h2c++;
    const reply = (res: HopResponse) => {
      seen.push({ method: inc.method ?? '', path: inc.url ?? '', status: res.status });
      out.writeHead(res.status, cleanHeaders(res.headers, res.body.length));
      out.end(res.body);
    };
    if (attack?.takeOver?.({ method: inc.method ?? 'GET', path: inc.url ?? '/' }, out)) {
      seen.push({ method: inc.method ?? '', path: inc.url ?? '', status: 0 });
      return;
    }
    (async () => {
      const req: HopRequest = {
        method: inc.method ?? 'GET',
        path: inc.url ?? '/',
        headers: inc.headers,
        body: await readAll(inc),
      };
      const a = attack;
      if (a?.takeOverRead?.(req, out)) {
        seen.push({ method: req.method, path: req.path, status: 0 });
        return;
      }
      const verdict = await a?.onRequest?.(req);
      if (verdict && 'answer' in verdict) return reply(verdict.answer);
      const sent = verdict?.forward ?? req;
      const res = await forward(sent);
      // The attack in force when the answer comes: a held downlink pull (decision 270) may outlive the
      // attack it was sent under, and the moment `use` is called is when the hop turns.
      reply((await attack?.onResponse?.(sent, res)) ?? res);
    })().catch((e: unknown) => {
      // An unreachable target looks like a hop that is down: a 502 the client treats as a failure.
      if (!out.headersSent) reply({ status: 502, headers: {}, body: Buffer.from(String(e)) });
      else out.destroy();
    });
  };
  return {
    handle,
    use: (a) => {
      attack = a;
    },
    seen,
    h2cRequests: () => h2c,
  };
}
