import { bearerToken } from '@driftline/hop';
import { type AuditAction, type Role, WireError } from '@driftline/protocol';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import type { ApiConfig } from '../../config.js';
import { hasRole } from '../../core/roles.js';
import { USER_NAME } from '../../core/users.js';
import type { Clock } from '../../ports/Clock.js';
import type { AuditRow, HubStore } from '../../ports/HubStore.js';
import { AddressSet, plainAddress } from './addresses.js';
import {
  CSRF_HEADER,
  clearedCookie,
  csrfOf,
  readCookie,
  SESSION_COOKIE,
  sameSecret,
  sha256Hex,
} from './credentials.js';
import { isGuardedPath, isRead, lookup, policyFor, type RoutePolicy } from './policy.js';
import type { Principal } from './principal.js';
import { RateLimits, tooMany } from './rateLimit.js';

export type { Principal } from './principal.js';

export interface AuthDeps {
  store: HubStore;
  clock: Clock;
  config: ApiConfig;
  /** Key of the CSRF values (HMAC of the session id). */
  csrfKey: Uint8Array;
  logger: Logger;
}

/** The `public` viewer `api.public: true` lets read without a credential. */
/** Longest audit text kept from a request (paths and names are the caller's to choose). */
const AUDIT_TEXT_MAX = 200;

const PUBLIC: Principal = { user: 'public', roles: ['viewer'], via: 'public' };

const unauthorized = (ctx: Context, detail: string) => {
  ctx.set('WWW-Authenticate', 'Bearer realm="driftline"');
  return new WireError('unauthorized', detail);
};

const statusOf = (e: unknown) => {
  const s = (e as { status?: unknown }).status;
  return typeof s === 'number' ? s : 500;
};

/**
 * Authentication and roles of the people's side (S5 in docs/architecture.md#invariants). Credentials, in order: a bearer operator
 * token, the session cookie (writes also need the CSRF header), the SSO proxy's identity header (only
 * from a configured proxy address, the TCP peer). Tokens and session ids are looked up by sha256 and
 * never logged.
 */
export class HubAuth {
  readonly limits: RateLimits;
  private readonly proxies: AddressSet;

  constructor(private readonly d: AuthDeps) {
    this.limits = new RateLimits(d.config.rateLimit.perMinute, d.config.rateLimit.failuresPerMinute);
    this.proxies = new AddressSet(d.config.sso.proxies);
  }

  /** The client address of a request: its TCP peer, never a header. */
  address(ctx: Context): string {
    return plainAddress(ctx.req.socket.remoteAddress);
  }

  /** True when the request reached the hub over TLS, or over a configured proxy that says so. */
  secure(ctx: Context): boolean {
    if ((ctx.req.socket as { encrypted?: boolean }).encrypted) return true;
    return this.proxies.has(ctx.req.socket.remoteAddress) && ctx.get('x-forwarded-proto') === 'https';
  }

  /**
   * Koa middleware in front of every router: applies {@link policyFor} to `/api…` and `/metrics`; a
   * path no route declares is refused (404/405) before any credential is looked at.
   */
  guard(): Middleware {
    return async (ctx, next) => {
      let path: string;
      try {
        path = decodeURIComponent(ctx.path);
      } catch {
        throw new WireError('bad-request', 'the path is not valid percent-encoding');
      }
      if (!isGuardedPath(path)) return next();
      // Matched on the raw path, segment by segment, so an encoded slash (pr%2F42) stays in its segment.
      const found = lookup(ctx.method, ctx.path);
      if ('allowed' in found && found.allowed.length > 0)
        ctx.set('Allow', [...found.allowed, ...(found.allowed.includes('GET') ? ['HEAD'] : [])].join(', '));
      const policy = policyFor(ctx.method, ctx.path);
      await this.check(ctx, policy);
      if (!policy.audit) return next();
      let status = 500;
      let detail: string | null = null;
      try {
        await next();
        status = ctx.status;
      } catch (e) {
        status = statusOf(e);
        detail = (e as { code?: string }).code ?? 'internal';
        throw e;
      } finally {
        const outcome = status < 400 ? 'ok' : status === 401 || status === 403 ? 'denied' : 'failed';
        await this.record(ctx, policy.audit, outcome, detail);
      }
    };
  }

  /**
   * Authenticates the request, counts it against its rate limit, and checks `policy` (CSRF on
   * cookie-authenticated writes, then the role). Leaves the principal in `ctx.state.principal`.
   */
  async check(ctx: Context, policy: RoutePolicy): Promise<void> {
    const address = this.address(ctx);
    const found = await this.resolve(ctx, address);
    const who = found ?? (this.d.config.public && isRead(ctx.method) ? PUBLIC : null);
    ctx.state.principal = who;
    await this.limits.take(ctx, who && who.via !== 'public' ? `u:${who.user}` : `a:${address}`);
    // A browser sends the session cookie, and an SSO proxy's own cookie, with cross-site requests too:
    // every write made with either must prove it comes from the dashboard. Signing in with a token in
    // the body is the one write that cannot (it has no session yet) and needs none (it sets one).
    const signIn = policy.path === '/api/session' && policy.method === 'POST';
    if (who && (who.via === 'session' || who.via === 'sso') && !isRead(ctx.method) && !signIn) {
      const sent = ctx.get(CSRF_HEADER);
      if (!sent || !sameSecret(sent, csrfOf(this.d.csrfKey, who))) {
        if (policy.audit) await this.record(ctx, policy.audit, 'denied', 'csrf');
        throw new WireError(
          'csrf',
          `${ctx.method} ${ctx.path} came with a browser credential (${who.via}) but without ${CSRF_HEADER}`,
        );
      }
    }
    if (policy.need === 'open') return;
    if (!who)
      throw unauthorized(
        ctx,
        'no credential: send Authorization: Bearer <token> (from `hub user add`), or sign in at /',
      );
    if (!hasRole(who.roles, policy.need as Role)) {
      if (policy.audit) await this.record(ctx, policy.audit, 'denied', `needs ${policy.need}`);
      throw new WireError(
        'forbidden',
        `${policy.method} ${policy.path} needs the ${policy.need} role; '${who.user}' has ${who.roles.join(', ') || 'none'} (ask an admin: hub user add NAME --role ${policy.need})`,
      );
    }
  }

  /** Who the request's credential belongs to, or null when it carries none. Throws 401/429 on a bad one. */
  async resolve(ctx: Context, address = this.address(ctx)): Promise<Principal | null> {
    const header = ctx.get('authorization');
    if (header) {
      const token = bearerToken(header);
      if (!token)
        return this.fail(ctx, 'token', 'anonymous', 'the Authorization header is not "Bearer <token>"');
      return { ...(await this.tokenUser(ctx, token)), via: 'token' };
    }
    const sid = readCookie(ctx.get('cookie'), SESSION_COOKIE);
    if (sid) {
      const p = await this.sessionPrincipal(sid);
      if (p) return p;
      ctx.append('Set-Cookie', clearedCookie(this.secure(ctx)));
    }
    const sso = this.d.config.sso.header;
    if (sso && ctx.get(sso) && this.proxies.has(ctx.req.socket.remoteAddress)) {
      return this.ssoPrincipal(ctx, ctx.get(sso).trim(), address);
    }
    return null;
  }

  /** The user an operator token belongs to; a wrong or revoked one is a failed sign-in (audited, 401). */
  async tokenUser(ctx: Context, token: string): Promise<{ user: string; roles: Role[] }> {
    await this.notBlocked(ctx);
    const user = await this.d.store.userByToken(sha256Hex(token));
    if (!user) return this.fail(ctx, 'token', 'anonymous', 'the token is unknown; check it or ask an admin');
    if (user.revokedAt !== null)
      return this.fail(ctx, 'token', user.name, `the token of '${user.name}' was revoked`);
    return { user: user.name, roles: user.roles };
  }

  private async sessionPrincipal(sid: string): Promise<Principal | null> {
    const row = await this.d.store.getSession(sha256Hex(sid));
    if (!row || row.expiresAt <= this.d.clock.now()) return null;
    const user = await this.d.store.getUser(row.user);
    if (!user || user.revokedAt !== null) return null;
    return { user: user.name, roles: user.roles, via: 'session', sessionId: sid };
  }

  private async ssoPrincipal(ctx: Context, name: string, address: string): Promise<Principal> {
    await this.notBlocked(ctx);
    if (!USER_NAME.test(name))
      return this.fail(ctx, 'sso', 'anonymous', 'the SSO identity is not a user name');
    const user = await this.d.store.getUser(name);
    if (user && user.revokedAt === null) return { user: user.name, roles: user.roles, via: 'sso' };
    const role = this.d.config.sso.defaultRole;
    if (!user && role) return { user: name, roles: [role], via: 'sso' };
    this.d.logger.info({ user: name, address }, 'SSO user refused');
    return this.fail(
      ctx,
      'sso',
      name,
      user
        ? `'${name}' was revoked`
        : `'${name}' is not a hub user (hub user add ${name} --role viewer --sso)`,
    );
  }

  private async notBlocked(ctx: Context): Promise<void> {
    const wait = await this.limits.signInBlocked(this.address(ctx));
    if (wait !== null) throw tooMany(ctx, wait, this.limits.blockedMessage());
  }

  /**
   * Records a failed sign-in and throws 401 (429 once the address is over its limit). An address
   * already over its limit gets the 429 without a new audit entry, so nobody can fill the audit log.
   */
  private async fail(ctx: Context, via: string, actor: string, detail: string): Promise<never> {
    const address = this.address(ctx);
    await this.notBlocked(ctx);
    const wait = await this.limits.failed(address);
    await this.write({
      at: this.d.clock.now(),
      actor,
      via,
      action: 'auth.fail',
      target: `${ctx.method} ${ctx.path}`,
      outcome: 'denied',
      detail,
      address,
    });
    if (wait !== null) throw tooMany(ctx, wait, this.limits.blockedMessage());
    throw unauthorized(ctx, detail);
  }

  /** Appends an audit entry for the request's principal. */
  async record(
    ctx: Context,
    action: AuditAction,
    outcome: AuditRow['outcome'],
    detail: string | null = null,
    target?: string,
  ): Promise<void> {
    const p = ctx.state.principal as Principal | null | undefined;
    await this.write({
      at: this.d.clock.now(),
      actor: p?.user ?? 'anonymous',
      via: p?.via ?? 'none',
      action,
      target: target ?? (ctx.state.auditTarget as string | undefined) ?? `${ctx.method} ${ctx.path}`,
      outcome,
      detail,
      address: this.address(ctx),
    });
  }

  private async write(row: Omit<AuditRow, 'id'>): Promise<void> {
    // What a request names is the attacker's to choose: keep a bounded part of it.
    const cut = (t: string | null) =>
      t !== null && t.length > AUDIT_TEXT_MAX ? `${t.slice(0, AUDIT_TEXT_MAX)}…` : t;
    try {
      await this.d.store.commit({
        audit: [
          { ...row, target: cut(row.target) ?? '', detail: cut(row.detail), actor: cut(row.actor) ?? '' },
        ],
      });
    } catch (err) {
      this.d.logger.error({ err, action: row.action }, 'writing an audit entry failed');
    }
  }
}
