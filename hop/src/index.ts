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
 * hop owns HTTP: bearer auth (`backend.authenticate`, 401), body limits checked from
 * Content-Length then while streaming (413), `Content-Encoding: br|gzip`, batch framing (400 with
 * the codec's code), downlink query validation (`bad-query`, `forbidden` unless the peer's `sites`
 * cover `for`), the tus endpoint (sha256 in Upload-Metadata checked on finish, 460 on mismatch),
 * Range/If-Range blob serving, `/v1/health`, `/metrics`, and one error middleware rendering
 * protocol's ERRORS. The backend owns custody: throw `WireError(code)` from it for a wire error
 * (e.g. `insufficient-storage` → 507).
 */
export { bearerToken } from './http/auth.js';
export { readLimitedBody } from './http/readBody.js';
export { MemoryHopBackend } from './memory/MemoryHopBackend.js';
export { createHopMetrics, type HopMetrics } from './metrics.js';
export type { BlobReader, FinishedUpload, HopBackend, Peer } from './ports/HopBackend.js';
export { createHopServer, type HopServer, type HopServerOptions } from './server.js';
export { isUploadPath, UPLOADS_PATH, type UploadOptions } from './tus/tusMount.js';
