import type { AuditAction, Role } from '@driftline/protocol';

/** Who may call one route: a role, or `open` (the route authenticates itself, e.g. sign-in). */
export interface RoutePolicy {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path with `:param` segments. */
  path: string;
  need: Role | 'open';
  /** The audit action a write records (outcome from its status); reads record nothing. */
  audit?: AuditAction;
}

/**
 * Every route of the people's side and who may call it (DESIGN S5). The guard in `auth.ts` checks it
 * before any router runs; a route missing here needs `viewer` to read and `admin` to write.
 */
export const ROUTE_POLICIES: readonly RoutePolicy[] = [
  { method: 'GET', path: '/api/session', need: 'open' },
  { method: 'POST', path: '/api/session', need: 'open' },
  { method: 'DELETE', path: '/api/session', need: 'open' },
  { method: 'GET', path: '/api/openapi.json', need: 'viewer' },
  { method: 'GET', path: '/api/matrix', need: 'viewer' },
  { method: 'GET', path: '/api/sites', need: 'viewer' },
  { method: 'GET', path: '/api/fleet', need: 'viewer' },
  { method: 'GET', path: '/api/relays', need: 'viewer' },
  { method: 'GET', path: '/api/sites/:site', need: 'viewer' },
  { method: 'GET', path: '/api/cells/:site/:environment/:component/runs', need: 'viewer' },
  { method: 'GET', path: '/api/runs/:runId', need: 'viewer' },
  { method: 'GET', path: '/api/plan-requests', need: 'viewer' },
  { method: 'GET', path: '/api/plan-requests/:requestId', need: 'viewer' },
  { method: 'POST', path: '/api/plan-requests', need: 'operator', audit: 'plan-request.create' },
  { method: 'GET', path: '/api/publications', need: 'viewer' },
  { method: 'GET', path: '/api/publications/:publicationId', need: 'viewer' },
  { method: 'POST', path: '/api/publications', need: 'publisher', audit: 'publication.publish' },
  // The deprecated names of the three above (decision 170): the same roles, the same audit action.
  { method: 'GET', path: '/api/bundles', need: 'viewer' },
  { method: 'GET', path: '/api/bundles/:bundleId', need: 'viewer' },
  { method: 'POST', path: '/api/bundles', need: 'publisher', audit: 'publication.publish' },
  { method: 'GET', path: '/api/events', need: 'viewer' },
  { method: 'GET', path: '/api/refs', need: 'viewer' },
  // A ref's slashes are percent-encoded (pr%2F42); decoded, such a path falls back to viewer for reads too.
  { method: 'GET', path: '/api/refs/:ref/status', need: 'viewer' },
  { method: 'GET', path: '/api/needs', need: 'viewer' },
  // Publishers read what sites hold; every role implies viewer.
  { method: 'GET', path: '/api/sources', need: 'viewer' },
  { method: 'GET', path: '/api/audit', need: 'viewer' },
  { method: 'GET', path: '/api/approvers', need: 'viewer' },
  { method: 'GET', path: '/api/approvals', need: 'viewer' },
  // The role only lets a person submit: the agent applies nothing without its pinned approvers' signatures.
  { method: 'POST', path: '/api/approvals', need: 'approver', audit: 'approval.submit' },
  { method: 'GET', path: '/metrics', need: 'viewer' },
];

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True for methods that change nothing (RFC 9110 §9.2.1). */
export const isRead = (method: string) => READS.has(method.toUpperCase());

/** True for paths the guard covers: `/api…` and `/metrics`, in any letter case, after percent-decoding. */
export function isGuardedPath(path: string): boolean {
  return /^\/*(api|metrics)(\/|$)/i.test(path);
}

const segments = (path: string) =>
  path
    .toLowerCase()
    .split('/')
    .filter((s) => s.length > 0);

function matches(pattern: string, path: string): boolean {
  const p = segments(pattern);
  const s = segments(path);
  return p.length === s.length && p.every((x, i) => x.startsWith(':') || x === s[i]);
}

/**
 * The policy of a request. Matching ignores letter case and empty segments, as the routers do, so
 * `/API//matrix/` cannot slip past. HEAD is GET. Unknown routes: reads need viewer, writes admin.
 */
export function policyFor(method: string, path: string): RoutePolicy {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  const hit = ROUTE_POLICIES.find((p) => p.method === m && matches(p.path, path));
  if (hit) return hit;
  return { method: m as RoutePolicy['method'], path, need: isRead(m) ? 'viewer' : 'admin' };
}
