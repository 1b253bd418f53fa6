/** What `GET /v1/health` says about the store: up, or down and why. */
export interface StoreHealth {
  ok: boolean;
  detail?: string;
}

/**
 * Asks `check` at most once per `ttlMs` and never twice at once: a load balancer polling `/v1/health`
 * every second on each hub must not become a query storm, nor pile up behind a database that hangs.
 * A check that throws reports `{ ok: false, detail: <its message> }`.
 */
export function sharedHealthCheck(
  check: () => Promise<void>,
  ttlMs: number,
  now: () => number,
): () => Promise<StoreHealth> {
  let last: { at: number; health: StoreHealth } | undefined;
  let inFlight: Promise<StoreHealth> | undefined;
  return () => {
    if (last && now() - last.at < ttlMs) return Promise.resolve(last.health);
    inFlight ??= check()
      .then(
        (): StoreHealth => ({ ok: true }),
        (e: unknown): StoreHealth => ({ ok: false, detail: (e as Error).message }),
      )
      .then((health) => {
        last = { at: now(), health };
        inFlight = undefined;
        return health;
      });
    return inFlight;
  };
}
