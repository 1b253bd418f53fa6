import { RetryLaterError } from '@driftline/hop';
import { WireError } from '@driftline/protocol';
import type { Middleware } from 'koa';
import { STORE_REFUSED, STORE_UNAVAILABLE } from '../postgres/errors.js';

/** Seconds a client is asked to wait when the store is busy. */
export const STORE_BUSY_RETRY_S = 5;

/**
 * What a store error means on the wire, or null for a bug. SQLite answers `SQLITE_BUSY`/`SQLITE_LOCKED`
 * (and their extended codes) when another connection held the write lock past the busy timeout, e.g. a
 * `hub` command run beside `hub run`: that passes, so it is `503` with `Retry-After`. A full disk is `507`.
 * PostgreSQL out of reach (down, restarting) is `503 store-unavailable`: the hub reconnects by itself;
 * so is PostgreSQL refusing the hub's password mid-run (rotated under it): relays keep custody meanwhile.
 */
export function storeErrorToWire(e: unknown): WireError | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (/^SQLITE_(BUSY|LOCKED)/.test(code))
    return new RetryLaterError(
      'unavailable',
      'the hub store is busy (another process holds its write lock); retry',
      STORE_BUSY_RETRY_S,
    );
  if (code === STORE_UNAVAILABLE || code === STORE_REFUSED)
    return new RetryLaterError('store-unavailable', (e as Error).message, STORE_BUSY_RETRY_S);
  if (code === 'SQLITE_FULL')
    return new WireError('insufficient-storage', 'the disk of the hub store is full; nothing was stored');
  return null;
}

/** Koa middleware turning store errors that pass ({@link storeErrorToWire}) into their wire errors. */
export function storeErrors(): Middleware {
  return async (_ctx, next) => {
    try {
      await next();
    } catch (e) {
      throw storeErrorToWire(e) ?? e;
    }
  };
}
