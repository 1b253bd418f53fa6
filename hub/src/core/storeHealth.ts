/** What `GET /v1/health` says about the store: up, or down and (in a fixed phrase) why. */
export interface StoreHealth {
  ok: boolean;
  detail?: string;
}

export interface HealthCheckOptions {
  /** Asked at most once per this many ms. */
  ttlMs: number;
  /** A check still running after this many ms reports the store down (a host gone silent must not hang probes). */
  timeoutMs: number;
  now: () => number;
  /**
   * What a failed check says on the wire, from its error. `/v1/health` answers anyone: the fixed phrase
   * goes out, the error itself (hosts, user names, server text) only to `onFailure` (the hub's log).
   */
  describe: (e: unknown) => string;
  onFailure?: (e: unknown) => void;
}

const TIMED_OUT = Symbol('timed out');

/**
 * Asks `check` at most once per `ttlMs`, one check for every caller at that moment: a load balancer
 * polling `/v1/health` every second on each hub must not become a query storm, nor pile up behind a
 * database that hangs (a check past `timeoutMs` is reported down and finishes in the background, so
 * checks overlap only while the database hangs, bounded by the pool's connection timeout).
 */
export function sharedHealthCheck(
  check: () => Promise<void>,
  o: HealthCheckOptions,
): () => Promise<StoreHealth> {
  let last: { at: number; health: StoreHealth } | undefined;
  let inFlight: Promise<StoreHealth> | undefined;
  const run = async (): Promise<StoreHealth> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMED_OUT), o.timeoutMs);
      timer.unref?.();
    });
    try {
      const r = await Promise.race([check().then(() => null), timeout]);
      if (r === TIMED_OUT) {
        o.onFailure?.(new Error(`the store did not answer a health check within ${o.timeoutMs} ms`));
        return { ok: false, detail: `the store did not answer within ${o.timeoutMs} ms` };
      }
      return { ok: true };
    } catch (e) {
      o.onFailure?.(e);
      return { ok: false, detail: o.describe(e) };
    } finally {
      clearTimeout(timer);
    }
  };
  return () => {
    if (last && o.now() - last.at < o.ttlMs) return Promise.resolve(last.health);
    inFlight ??= run().then((health) => {
      last = { at: o.now(), health };
      inFlight = undefined;
      return health;
    });
    return inFlight;
  };
}
