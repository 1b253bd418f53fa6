import { type AuditAction, WireError } from '@driftline/protocol';
import { API_ROUTES } from './routes/index.js';
import type { Method, Need } from './routes/route.js';

/** Who may call one route: a role, or `open` (the route authenticates itself, e.g. sign-in). */
export interface RoutePolicy {
  method: Method;
  /** Path with `:param` segments. */
  path: string;
  need: Need;
  /** The audit action a write records (outcome from its status); reads record nothing. */
  audit?: AuditAction;
}

/** Guarded routes served outside the `/api` table: `/metrics` (the hop server or `peopleSide.ts`). */
const SERVED_ELSEWHERE: readonly RoutePolicy[] = [{ method: 'GET', path: '/metrics', need: 'viewer' }];

/**
 * Every guarded route and who may call it (docs/decisions/280-one-place-per-decision.md): the `/api`
 * table's roles, and `/metrics`. A route that is not here is not served: the guard answers 404 (or 405
 * for another method of a known path) before any credential is looked at.
 */
export const ROUTE_POLICIES: readonly RoutePolicy[] = [
  ...API_ROUTES.map(
    (r): RoutePolicy => ({
      method: r.method,
      path: r.path,
      need: r.role,
      ...(r.audit ? { audit: r.audit } : {}),
    }),
  ),
  ...SERVED_ELSEWHERE,
];

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True for methods that change nothing (RFC 9110 §9.2.1). */
export const isRead = (method: string) => READS.has(method.toUpperCase());

/** True for paths the guard covers: `/api…` and `/metrics`, in any letter case, after percent-decoding. */
export function isGuardedPath(path: string): boolean {
  return /^\/*(api|metrics)(\/|$)/i.test(path);
}

/** A path's segments, each percent-decoded (so `pr%2F42` stays one segment), in lower case. */
function segments(path: string): string[] {
  return path
    .split('/')
    .filter((s) => s.length > 0)
    .map((s) => {
      try {
        return decodeURIComponent(s).toLowerCase();
      } catch {
        return s.toLowerCase();
      }
    });
}

function matches(pattern: string, path: string[]): boolean {
  const p = segments(pattern);
  return p.length === path.length && p.every((x, i) => x.startsWith(':') || x === path[i]);
}

/** The policy of a request, or the methods its path allows when no route of that method matches. */
export function lookup(method: string, path: string): { policy: RoutePolicy } | { allowed: Method[] } {
  const upper = method.toUpperCase();
  // HEAD is GET; OPTIONS asks what GET asks (it answers which methods the path allows).
  const m = upper === 'HEAD' || upper === 'OPTIONS' ? 'GET' : upper;
  const s = segments(path);
  const onPath = ROUTE_POLICIES.filter((p) => matches(p.path, s));
  const hit = onPath.find((p) => p.method === m);
  return hit ? { policy: hit } : { allowed: [...new Set(onPath.map((p) => p.method))] };
}

/**
 * The policy of a request. Matching ignores letter case and empty segments, as the router does, so
 * `/API//matrix/` cannot slip past; each segment is percent-decoded on its own. HEAD is GET. A route
 * with no policy is refused: 404 for an unknown path, 405 for another method of a known one.
 */
export function policyFor(method: string, path: string): RoutePolicy {
  const found = lookup(method, path);
  if ('policy' in found) return found.policy;
  if (found.allowed.length > 0)
    throw new WireError(
      'method-not-allowed',
      `${method.toUpperCase()} is not allowed on ${path}: use ${found.allowed.join(' or ')} (see GET /api/openapi.json)`,
    );
  throw new WireError('not-found', `no route ${path} (the routes are listed at GET /api/openapi.json)`);
}
