import type { AuthVia, Role } from '@driftline/protocol';

/** Who a request acts as (`ctx.state.principal`, set by the auth guard). */
export interface Principal {
  user: string;
  roles: Role[];
  via: AuthVia;
  /** The session id from the cookie, when `via` is `session` (the CSRF value derives from it). */
  sessionId?: string;
}
