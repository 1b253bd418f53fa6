import { createServer, type Server } from 'node:http';
import { WireError } from '@driftline/protocol';
import { Router } from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import pino, { type Logger } from 'pino';
import type { Registry } from 'prom-client';
import { requirePeer } from './http/auth.js';
import { exchangeTimes, PeerClocks, type StampKey } from './http/clocks.js';
import {
  applyConnectionLimits,
  type ConnectionLimits,
  checkingIntervalMs,
  omitKeepAliveLines,
} from './http/connections.js';
import { errorMiddleware } from './http/errorMiddleware.js';
import { acceptH2c } from './http/h2c.js';
import { closeServer, listenOn } from './http/lifecycle.js';
import { type MetricsAccess, metricsAccess } from './http/metricsRoute.js';
import { OpenCredentials, RECHECK_MS } from './http/openCredentials.js';
import { sendError } from './http/refuse.js';
import { HOP_ROUTES, type HopRole } from './http/routes.js';
import { SeqWindows } from './http/seqWindows.js';
import { createHopMetrics, type HopMetrics } from './metrics.js';
import type { HopBackend } from './ports/HopBackend.js';
import { createTusMount, isUploadPath, type UploadOptions } from './tus/tusMount.js';

/** Options of {@link createHopServer}; {@link ConnectionLimits} cap sockets per client address. */
export interface HopServerOptions extends ConnectionLimits {
  /** The tus endpoint: upload directory and limits. */
  uploads: UploadOptions;
  /** Largest `POST /v1/bundles` body, compressed and decompressed, in bytes (413 above). Default 8 MiB. */
  maxBatchBytes?: number;
  /** Most bundles in one batch. Default 10,000. */
  maxBundlesPerBatch?: number;
  /**
   * Maps the backend's own errors that pass to wire errors (e.g. a busy store to 503 with `Retry-After`);
   * anything it returns null for is `internal` (500) and logged.
   */
  mapError?: (e: unknown) => WireError | null;
  /** Injected logger; default silent. */
  logger?: Logger;
  /** Registry `/metrics` serves; pass one to add your own metrics beside hop's. */
  registry?: Registry;
  /** Who may read `/metrics`; default: any peer token. */
  metrics?: MetricsAccess;
  /** Node's `server.requestTimeout` in ms; default 0 (off) so a long PATCH over a slow link is not cut. */
  requestTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection stays open, ms. Default 1 hour. It must outlast the slowest
   * link's round trip: a client reuses a socket it believes open, and over a link with 12 s of one-way
   * delay a 5 s server timeout (Node's default) closes it before the request arrives ("socket hang up").
   */
  keepAliveTimeoutMs?: number;
  /**
   * This node's key: every exchange it serves is stamped with it (`driftline-stamp`), for the signed
   * timing chain (docs/decisions/290-signed-hop-chain.md). Absent: times are sent unsigned, as before.
   */
  stamp?: StampKey;
  /** How often expired tus uploads are removed, ms. Default 1 hour; 0 turns it off. */
  uploadCleanupIntervalMs?: number;
  /**
   * Mounts more on the same Koa app, after the hop routes (which fall through when they do not match):
   * the hub adds `/api/…`, SSE and static UI files here. Errors thrown there are rendered by hop's
   * error middleware as `{ error: { code, message } }`.
   */
  extend?: (app: Koa) => void;
  /** The node's clock (ms since the epoch) stamped on exchanges for the peers' offset estimates; default `Date.now`. */
  now?: () => number;
  /**
   * How often the tokens of open held pulls and tus uploads are checked again, ms (default 1000): one
   * revoked or rotated out past its grace closes them (docs/decisions/411-revocation-cuts-at-once.md).
   */
  revocationCheckMs?: number;
  /**
   * Serve HTTP/2 with prior knowledge (h2c) on the same port, beside HTTP/1.1 (default true): a hop v2
   * agent that is told so keeps one connection across rounds, its heads a few bytes each (issue 46).
   */
  h2c?: boolean;
}

/** A hop API server, not yet listening. */
export interface HopServer {
  server: Server;
  app: Koa;
  metrics: HopMetrics;
  /** Listens (default 127.0.0.1, port 0) and resolves with the base URL. */
  listen(port?: number, host?: string): Promise<{ port: number; url: string }>;
  /** Stops listening, drops open connections, stops the cleanup timer. */
  close(): Promise<void>;
  /** The tus endpoint's in-progress uploads: bytes they reserved (whole `Upload-Length` each). */
  uploads: { reservedBytes(): number; reservedBy(peer: string): number };
}

/**
 * Serves the hop API (docs/architecture.md#wire) over `backend`: `POST /v1/bundles`, `GET /v1/bundles`, tus at
 * `/v1/uploads/`, `GET /v1/blobs/:sha256`, `GET /v1/health`, `GET /metrics`.
 *
 * @example
 * const hop = createHopServer(backend, { uploads: { directory: '/var/lib/relay/uploads' } });
 * const { url } = await hop.listen(8080, '0.0.0.0');
 */
export function createHopServer(backend: HopBackend, options: HopServerOptions): HopServer {
  const logger = options.logger ?? pino({ level: 'silent' });
  let openNow = () => 0;
  const metrics = createHopMetrics(options.registry, () => openNow());
  const limits = {
    maxBatchBytes: options.maxBatchBytes ?? 8 * 1024 * 1024,
    maxBundlesPerBatch: options.maxBundlesPerBatch ?? 10_000,
  };
  const credentials = new OpenCredentials(backend, options.revocationCheckMs ?? RECHECK_MS, (n) => {
    metrics.revokedClosed.inc(n);
    logger.warn({ closed: n }, 'a token was revoked: its open held pulls and uploads are closed');
  });
  openNow = () => credentials.size;
  const tus = createTusMount(backend, metrics, logger, options.uploads, credentials);
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  const peerClocks = new PeerClocks();
  const auth = requirePeer(backend);
  const clocks = peerClocks.middleware();
  const guards: Record<HopRole, Middleware[]> = {
    peer: [auth],
    open: [],
    signed: [],
    metrics: [metricsAccess(backend, options.metrics)],
  };
  const deps = {
    backend,
    metrics,
    limits,
    peerClocks,
    credentials,
    windows: new SeqWindows(),
    now: options.now ?? Date.now,
    h2c: options.h2c ?? true,
  };
  for (const r of HOP_ROUTES) {
    const chain = [...guards[r.role], ...(r.clocks ? [clocks] : []), (ctx: Context) => r.handler(ctx, deps)];
    if (r.method === 'GET') router.get(r.path, ...chain);
    else router.post(r.path, ...chain);
  }
  app.use(countRequests(metrics));
  app.use(exchangeTimes(options.now ?? Date.now, options.stamp));
  app.use(errorMiddleware(logger, options.mapError));
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new WireError('method-not-allowed'),
      notImplemented: () => new WireError('method-not-allowed'),
    }),
  );
  options.extend?.(app);

  const callback = app.callback();
  const headersTimeoutMs = options.headersTimeoutMs ?? 60_000;
  const server = createServer(
    {
      connectionsCheckingInterval: checkingIntervalMs(headersTimeoutMs),
      // TCP keep-alive probes after a minute idle: a held pull whose agent vanished without a word (power
      // cut, a NAT that forgot it) is closed in minutes, not at the end of its hold (decision 390)
      keepAlive: true,
      keepAliveInitialDelay: 60_000,
    },
    (req, res) => {
      omitKeepAliveLines(req, res);
      if (isUploadPath(req.url)) {
        tus.handle(req, res).catch((err) => {
          logger.error({ err }, 'tus request failed');
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
      } else callback(req, res);
    },
  );
  const keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? 3_600_000;
  if (deps.h2c)
    acceptH2c(
      server,
      (req, res) => {
        // tus (and its clients) speak HTTP/1.1; only the hop's Koa routes are served over h2c
        if (isUploadPath(req.url))
          sendError(
            req,
            res,
            'bad-request',
            'tus uploads are served over HTTP/1.1: upload on an HTTP/1.1 connection',
          );
        else callback(req, res);
      },
      { firstBytesTimeoutMs: headersTimeoutMs, idleTimeoutMs: keepAliveTimeoutMs },
    );
  server.requestTimeout = options.requestTimeoutMs ?? 0;
  server.keepAliveTimeout = keepAliveTimeoutMs;
  applyConnectionLimits(server, { ...options, headersTimeoutMs }, () => metrics.connectionsRefused.inc());
  const interval = options.uploadCleanupIntervalMs ?? 3_600_000;
  const timer =
    interval > 0
      ? setInterval(() => {
          tus.cleanUpExpired().catch((err) => logger.warn({ err }, 'expiring old uploads failed'));
        }, interval)
      : undefined;
  timer?.unref();

  return {
    server,
    app,
    metrics,
    uploads: {
      reservedBytes: () => tus.ledger.total(),
      reservedBy: (peer) => tus.ledger.byPeer(peer),
    },
    listen: (port, host) => listenOn(server, port, host),
    close: () => {
      if (timer) clearInterval(timer);
      credentials.stop();
      return closeServer(server);
    },
  };
}

function countRequests(metrics: HopMetrics): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'other';
      metrics.requests.inc({ route: String(route), status: String(ctx.status) });
    }
  };
}
