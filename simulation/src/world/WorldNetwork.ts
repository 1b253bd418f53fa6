import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import inject from 'light-my-request';
import type { Random } from '../core/rng.js';
import type { WorldLink } from './WorldLink.js';

/** A node's HTTP entry: what its server's `request` listener does with one exchange. */
export type Dispatch = (req: IncomingMessage, res: ServerResponse) => void;

/** The request a hop client hands its transport (hop's `PlainInit`). */
export interface WorldInit {
  method: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  signal?: AbortSignal;
}

/** What hop's client needs of a transport (`HopTransport` in @driftline/hop/client). */
export interface WorldTransport {
  request(url: string, init: WorldInit): Promise<Response>;
  close(): void;
}

/** Largest body the world inflates (the nodes' own caps are far below). */
const INFLATE_CAP = 256 * 1024 * 1024;
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** A world node's address: `http://<name>.world`. */
export const worldUrl = (node: string) => `http://${node}.world`;

const nodeOf = (url: URL) =>
  url.hostname.endsWith('.world') ? url.hostname.slice(0, -'.world'.length) : null;

function netError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The world's network (docs/decisions/540-deterministic-world.md): every hop exchange between world nodes
 * is carried by a {@link WorldLink} and handed to the receiving node's request listener through
 * `light-my-request`, no socket. Delays are the world's timers, faults the world's PRNG, so a seed decides
 * every passage. Bodies are carried inflated (a compressed request is inflated here, answers are asked
 * for without compression): a zlib stream would work in libuv's pool, outside what the clock can wait for.
 */
export class WorldNetwork {
  private readonly nodes = new Map<string, Dispatch>();
  private readonly links = new Map<string, WorldLink>();
  /** The exchanges under way with each node (either end), cut when it goes down. */
  private readonly underway = new Map<string, Set<AbortController>>();
  /** Exchanges sent, delivered and answered: for the world's report and invariants. */
  readonly counts = { sent: 0, delivered: 0, refused: 0, hung: 0, lost: 0, duplicated: 0, cut: 0 };

  /**
   * @param lan the link for a pair nobody connected (a LAN beside the nodes, say); without it an exchange
   * between unconnected nodes fails as an unknown host does.
   */
  constructor(
    private readonly random: Random,
    private readonly lan?: (from: string, to: string) => WorldLink,
  ) {}

  /** Makes `node` reachable at {@link worldUrl}(node); a restarted node attaches again. */
  attach(node: string, dispatch: Dispatch): void {
    this.nodes.set(node, dispatch);
  }

  /** A crashed node: exchanges to it are refused until it attaches again. */
  detach(node: string): void {
    this.nodes.delete(node);
  }

  /**
   * `node` goes down without warning (the `crash` fault): it is refused like a detached node, and every
   * exchange under way with it, either way, ends as a reset: an answer it was writing never leaves, and
   * an answer on its way to it finds nobody.
   */
  down(node: string): void {
    this.detach(node);
    const cut = [...(this.underway.get(node) ?? [])];
    this.underway.delete(node);
    for (const c of cut) {
      this.counts.cut++;
      c.abort(netError('ECONNRESET', `socket hang up (${node} went down)`));
    }
  }

  /**
   * The link `from` → `to` drops its connections (a cable pulled, a radio fade): every exchange under way
   * on it ends at once as a reset, counted as `cut`, whatever part of it had passed. What it does next (up
   * again, or down: `WorldLink.cut`) is the link's. Answers how many it ended.
   */
  reset(from: string, to: string): number {
    const key = `${from}>${to}`;
    const cut = [...(this.underway.get(key) ?? [])];
    this.underway.delete(key);
    for (const c of cut) {
      this.counts.cut++;
      c.abort(netError('ECONNRESET', `socket hang up (the link ${key} dropped)`));
    }
    return cut.length;
  }

  /** Runs one exchange as cuttable by {@link down} of either end: its signal also ends when one goes down. */
  private async cuttable<T>(
    ends: string[],
    signal: AbortSignal | undefined,
    run: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const c = new AbortController();
    for (const n of ends) {
      const set = this.underway.get(n) ?? new Set();
      this.underway.set(n, set);
      set.add(c);
    }
    try {
      return await run(signal ? AbortSignal.any([signal, c.signal]) : c.signal);
    } finally {
      for (const n of ends) this.underway.get(n)?.delete(c);
    }
  }

  /** The link `from` → `to` (a client opens every connection, so one link per pair). */
  connect(from: string, to: string, link: WorldLink): void {
    this.links.set(`${from}>${to}`, link);
  }

  link(from: string, to: string): WorldLink | undefined {
    const known = this.links.get(`${from}>${to}`);
    if (known || !this.lan) return known;
    const made = this.lan(from, to);
    this.connect(from, to, made);
    return made;
  }

  /** The transport a node's hop clients use: every exchange leaves by the node's links. */
  transport(from: string): WorldTransport {
    return {
      request: (url, init) => {
        const to = nodeOf(new URL(url)) ?? url;
        // keyed by either end (`down`) and by the link (`reset`)
        return this.cuttable([from, to, `${from}>${to}`], init.signal, (signal) =>
          this.exchange(from, url, { ...init, signal }),
        );
      },
      close: () => {},
    };
  }

  private async exchange(from: string, target: string, init: WorldInit): Promise<Response> {
    const url = new URL(target);
    const to = nodeOf(url);
    const link = to ? this.link(from, to) : undefined;
    if (!to || !link)
      throw netError(
        'ENOTFOUND',
        `getaddrinfo ENOTFOUND ${url.hostname} (no world link ${from} → ${to ?? url.hostname})`,
      );
    this.counts.sent++;
    const body = inflatedBody(init);
    const headers = { ...init.headers };
    delete headers['content-encoding'];
    delete headers['accept-encoding'];
    if (body) headers['content-length'] = String(body.length);
    const size = (body?.length ?? 0) + 200;
    link.bytes.up += size;
    const passage = link.pass(Date.now(), size, link.random ?? this.random);
    if (passage.kind === 'refused') {
      this.counts.refused++;
      // a refused connection is known at once (an RST comes back within the link's round trip, far
      // below any timer a node sets; the world counts it as the same instant)
      throw netError('ECONNREFUSED', `connect ECONNREFUSED ${url.host}`);
    }
    if (passage.kind === 'hang') {
      this.counts.hung++;
      return never(init.signal);
    }
    // a streamed body's transfer is the server's to wait for: its headers come after the rest of `upMs`
    const bodyMs = link.streamsBodies && body ? link.requestTransferMs(body.length) : 0;
    await delay(passage.upMs - bodyMs, init.signal);
    const dispatch = this.nodes.get(to);
    if (!dispatch) throw netError('ECONNREFUSED', `connect ECONNREFUSED ${url.host} (${to} is down)`);
    if (passage.requestLost) {
      this.counts.lost++;
      throw netError('ECONNRESET', 'socket hang up');
    }
    this.counts.delivered++;
    const send = (payload: Buffer | Readable | undefined) =>
      inject(dispatch, {
        method: init.method as 'GET',
        url: `${url.pathname}${url.search}`,
        headers: { host: url.host, ...headers },
        ...(payload ? { payload } : {}),
        remoteAddress: '127.0.0.1',
      });
    const paced = body && bodyMs > 0 ? pacedBody(body, (n) => link.requestTransferMs(n), init.signal) : null;
    const sent = send(paced ? paced.stream : body && Buffer.from(body));
    // the caller may give up first (`abortable`): what the server then does is nobody's to hear
    sent.catch(() => undefined);
    let answer: Awaited<typeof sent>;
    try {
      answer = await abortable(sent, init.signal);
    } catch (e) {
      // the server closed the exchange before answering (light-my-request's reset)
      if ((e as { code?: string }).code === 'LIGHT_ECONNRESET')
        throw netError('ECONNRESET', `socket hang up (${to} closed the connection)`);
      throw e;
    } finally {
      paced?.stop();
    }
    if (passage.duplicate) {
      this.counts.duplicated++;
      await send(body && Buffer.from(body));
    }
    const raw = decoded(answer.rawPayload, answer.headers['content-encoding']);
    link.bytes.down += raw.length + 150;
    await delay(passage.downMs + link.answerTransferMs(raw.length), init.signal);
    if (passage.answerLost) {
      this.counts.lost++;
      throw netError('ECONNRESET', 'socket hang up');
    }
    const out = new Headers();
    for (const [k, v] of Object.entries(answer.headers)) {
      if (v === undefined || k === 'content-encoding' || k === 'content-length' || k === 'transfer-encoding')
        continue;
      for (const one of Array.isArray(v) ? v : [String(v)]) out.append(k, one);
    }
    out.set('content-length', String(raw.length));
    const empty = NULL_BODY.has(answer.statusCode) || init.method === 'HEAD';
    return new Response(empty ? null : new Uint8Array(raw), { status: answer.statusCode, headers: out });
  }
}

/** Bytes of a streamed body released at a time. */
const PACE_BYTES = 16 * 1024;

/**
 * A request body released {@link PACE_BYTES} at a time at the link's rate (`transferMs` of each piece,
 * the world's timers): what a server reading a slow upload sees. `stop` ends the release (the exchange
 * was answered or cut); the caller's abort resets it, as a client that goes away mid-upload.
 */
function pacedBody(
  body: Uint8Array,
  transferMs: (bytes: number) => number,
  signal?: AbortSignal,
): { stream: Readable; stop(): void } {
  const stream = new Readable({ read() {} });
  let offset = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const next = () => {
    const piece = body.subarray(offset, offset + PACE_BYTES);
    timer = setTimeout(() => {
      offset += piece.length;
      stream.push(Buffer.from(piece));
      if (offset < body.length) next();
      else stream.push(null);
    }, transferMs(piece.length));
  };
  const onAbort = () => {
    clearTimeout(timer);
    stream.destroy(netError('ECONNRESET', 'the client went away mid-upload'));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  next();
  return {
    stream,
    stop() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

function inflatedBody(init: WorldInit): Uint8Array | undefined {
  if (init.body === undefined) return undefined;
  const bytes = typeof init.body === 'string' ? Buffer.from(init.body) : init.body;
  return decoded(Buffer.from(bytes), init.headers?.['content-encoding']);
}

function decoded(bytes: Buffer, encoding: string | string[] | number | undefined): Buffer {
  const e = String(encoding ?? '').toLowerCase();
  if (e === 'br') return brotliDecompressSync(bytes, { maxOutputLength: INFLATE_CAP });
  if (e === 'gzip') return gunzipSync(bytes, { maxOutputLength: INFLATE_CAP });
  if (e === 'deflate') return inflateSync(bytes, { maxOutputLength: INFLATE_CAP });
  return bytes;
}

function aborted(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Waits `ms` of world time (the world's timers), ended early by the caller's signal. */
function delay(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(aborted(signal));
  return new Promise<void>((resolve, reject) => {
    const t = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = () => {
      clearTimeout(t);
      reject(aborted(signal as AbortSignal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function never(signal?: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal?.aborted) reject(aborted(signal));
    signal?.addEventListener('abort', () => reject(aborted(signal)), { once: true });
  });
}

function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  return Promise.race([p, never(signal)]);
}
