/**
 * `@driftline/hop`: the hop API both relays and the hub serve (docs/decisions/006-hop-workspace.md).
 *
 * Implement {@link HopBackend} and call {@link createHopServer}:
 *
 * ```ts
 * const hop = createHopServer(backend, {
 *   uploads: { directory: join(dataDir, 'uploads'), maxSize: 1 << 30 },
 *   registry,                      // optional prom-client Registry to add your own metrics
 *   logger,                        // pino
 *   extend: (app) => app.use(myApiRouter.routes()), // hub: /api/…, SSE, static UI
 * });
 * const { url } = await hop.listen(8080, '0.0.0.0');
 * // … later: await hop.close();
 * ```
 *
 * hop owns HTTP: bearer auth (`backend.authenticate`, 401 with `WWW-Authenticate`), connections per
 * client address, the headers timeout, refused bodies never drained (the connection closes), body
 * limits checked from Content-Length then while streaming, before and after decompression (413),
 * `Content-Encoding: br|gzip`, batch framing (400 with the codec's code), downlink query validation
 * (`bad-query`, `forbidden` unless the peer's `sites` cover `for`), the tus endpoint (sha256 in
 * Upload-Metadata checked on finish, 460 on mismatch; an upload is visible only to the peer that
 * created it; `uploads.admit` applies disk caps and quotas), Range/If-Range blob serving,
 * `/v1/health`, `/metrics` (behind a token unless `metrics.public`), and one error middleware
 * rendering protocol's ERRORS (429/503 with `Retry-After`), and clock offsets per hop (`options.now` stamps
 * each timed exchange; each bundle source's clock reaches `backend.accept` composed with the peer's:
 * docs/decisions/070-clock-offsets.md). The backend owns custody: throw
 * `WireError(code)` from it for a wire error (e.g. `insufficient-storage` → 507), `RetryLaterError` for
 * a 429 with its own `Retry-After`.
 */
export {
  actsFor,
  type ScopedBatch,
  type ScopeRefusal,
  scopeBatch,
  scopeWatch,
  type Wire2KeyOwner,
} from './core/scope.js';
export { bearerToken } from './http/auth.js';
export type { StampKey } from './http/clocks.js';
export { exchangeTimes, PeerClocks } from './http/clocks.js';
export { applyConnectionLimits, type ConnectionLimits, checkingIntervalMs } from './http/connections.js';
export { DownlinkWaiters, type Holder, MAX_HELD_PER_HOLDER, type WaitEnd } from './http/downlinkWaiters.js';
export { errorMiddleware } from './http/errorMiddleware.js';
export { H2_PREFACE } from './http/h2c.js';
export { closeServer, healthHandler, listenOn } from './http/lifecycle.js';
export type { MetricsAccess } from './http/metricsRoute.js';
export { readLimitedBody } from './http/readBody.js';
export { AUTH_CHALLENGE, RetryLaterError } from './http/refuse.js';
export { HOP_ROUTES, type HopRole, type HopRoute } from './http/routes.js';
export { hopLimitFields } from './limitsSchema.js';
export { MemoryHopBackend } from './memory/MemoryHopBackend.js';
export { createHopMetrics, type HopMetrics } from './metrics.js';
export type {
  BlobReader,
  Custody,
  FinishedUpload,
  HopBackend,
  Peer,
  SourceClocks,
} from './ports/HopBackend.js';
export type { Wire2Backend, Wire2Sender } from './ports/Wire2Backend.js';
export { createHopServer, type HopServer, type HopServerOptions } from './server.js';
export { isUploadPath, type Reserved, UPLOADS_PATH, type UploadOptions } from './tus/tusMount.js';
export {
  ackLaterField,
  encodePush,
  type PushDelta,
  type PushForms,
  pushBundleId,
  pushDelta,
  pushFormsOf,
  wire2KeyId,
  wire2NodeId,
  wire2SiteId,
} from './wire2/push.js';
