/**
 * `@driftline/hop/client`: the hop API, client side, for the agent and relays (no Koa, no server).
 *
 * ```ts
 * const up = new HopClient({ url, token, timeoutMs: 120_000 });
 * const r = await up.postBatch(encodeBatch(bundles), { count: bundles.length });
 * if (!r.ok) log[r.retryable ? 'warn' : 'error']({ code: r.code }, r.message);
 * ```
 */
export type { RangeResult, RangeSink } from './client/fetchRange.js';
export { HELD_SAMPLE_EVERY_MS, HopClient, type HopClientOptions } from './client/HopClient.js';
export { H2cRefusedError, H2cTransport } from './client/h2cTransport.js';
export type { HopTransport } from './client/hopTransport.js';
export { readRefusalsJson } from './client/refusals.js';
export {
  type ClientCode,
  type HopFailure,
  type HopResult,
  refusesRequest,
  retryableStatus,
} from './client/result.js';
export { type TokenFileOptions, tokenFromFile } from './client/tokenFile.js';
export type { TusUpload } from './client/tusUpload.js';
export type { Wire2CarrierState } from './client/wire2Carrier.js';
