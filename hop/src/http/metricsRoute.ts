import type { Context, Middleware } from 'koa';
import type { HopBackend } from '../ports/HopBackend.js';
import { authenticate } from './auth.js';

/** Who may read `GET /metrics` (S5 in docs/architecture.md#invariants: by default nothing that reads is open). */
export interface MetricsAccess {
  /** Serves `/metrics` without credentials, for a closed network. Default false. */
  public?: boolean;
  /**
   * Decides from a request's credentials; throw `WireError('unauthorized' | 'forbidden')` to refuse.
   * Default: any bearer token `backend.authenticate` accepts (a peer token).
   */
  authorize?: (ctx: Context) => Promise<void>;
}

/** The guard of `GET /metrics` (role `metrics` in routes.ts): {@link MetricsAccess}, else any peer token. */
export function metricsAccess(backend: HopBackend, access: MetricsAccess = {}): Middleware {
  return async (ctx, next) => {
    if (!access.public) {
      if (access.authorize) await access.authorize(ctx);
      else await authenticate(backend, ctx.get('authorization'));
    }
    await next();
  };
}
