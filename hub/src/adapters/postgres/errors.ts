/**
 * The `code` of {@link StoreUnavailableError}. `storeErrorToWire` turns it into a 503 `store-unavailable`
 * with `Retry-After`, so relays keep custody of what they sent and retry.
 */
export const STORE_UNAVAILABLE = 'STORE_UNAVAILABLE';

/** The database could not be reached (down, restarting, out of connections); nothing of the request was stored. */
export class StoreUnavailableError extends Error {
  readonly code = STORE_UNAVAILABLE;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** The `code` of {@link StoreRefusedError}. */
export const STORE_REFUSED = 'STORE_REFUSED';

/**
 * The database answered but refused this hub: a wrong user or password (SQLSTATE class 28) or no such
 * database (3D000). A configuration mistake, not an outage: `hub run` stops at start with it in one line;
 * mid-run (a password rotated under it) the hop API answers 503 so relays keep custody and retry.
 */
export class StoreRefusedError extends Error {
  readonly code = STORE_REFUSED;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreRefusedError';
  }
}

/** Node socket errors a connection to the database fails with while it is down or unreachable. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOENT', // a unix socket path that is not there (the server is not running)
]);

/**
 * SQLSTATEs that mean "not now" rather than "wrong": connection exceptions (class 08), the server
 * shutting down or starting (57P01–57P03), too many connections (53300), and a serialization failure
 * or deadlock that outlived the retries (40001, 40P01).
 */
const TRANSIENT_SQLSTATE = /^(08...|57P0[123]|53300|40001|40P01)$/;

/** pg's own errors for a connection that broke or never came up (they carry no code). */
const PG_CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable|Client was closed/i;

/** True when `e` says the database is unreachable or unavailable for now, not that the query was wrong. */
export function isUnavailable(e: unknown): boolean {
  if (e instanceof StoreUnavailableError) return true;
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || TRANSIENT_SQLSTATE.test(code))) return true;
  if (e instanceof AggregateError && e.errors.some(isUnavailable)) return true;
  return PG_CONNECTION_MESSAGES.test(e.message);
}

/** A serialization failure or deadlock: the transaction may simply be run again. */
export const isRetryable = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
};

/**
 * `e` as a {@link StoreUnavailableError} or {@link StoreRefusedError} naming `where` (and what to fix)
 * when it is one, else `e` unchanged.
 */
export function toStoreError(e: unknown, where: string): unknown {
  if (e instanceof StoreUnavailableError || e instanceof StoreRefusedError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && e instanceof Error) {
    if (code.startsWith('28'))
      return new StoreRefusedError(
        `PostgreSQL at ${where} refused the hub (${e.message}): fix the user in store.url or the password in store.passwordFile or store.passwordEnv`,
        { cause: e },
      );
    if (code === '3D000')
      return new StoreRefusedError(
        `PostgreSQL at ${where} has no such database (${e.message}): create it (createdb) or fix store.url`,
        { cause: e },
      );
  }
  if (!isUnavailable(e)) return e;
  const why = (e as { code?: string }).code ?? (e as Error).message;
  return new StoreUnavailableError(
    `PostgreSQL at ${where} is unavailable (${why}): start the database or fix store.url; the hub reconnects by itself`,
    { cause: e },
  );
}
