/**
 * Paths of the hub's `/api`, with `:name` parameters: the hub's route table declares its routes with
 * these and the dashboard calls them through {@link fillPath}, so a path is written once
 * (docs/decisions/280-one-place-per-decision.md).
 */
export const API_PATHS = {
  session: '/api/session',
  openapi: '/api/openapi.json',
  matrix: '/api/matrix',
  sites: '/api/sites',
  site: '/api/sites/:site',
  fleet: '/api/fleet',
  relays: '/api/relays',
  runs: '/api/cells/:site/:environment/:component/runs',
  run: '/api/runs/:runId',
  planRequests: '/api/plan-requests',
  planRequest: '/api/plan-requests/:requestId',
  events: '/api/events',
  refs: '/api/refs',
  refStatus: '/api/refs/:ref/status',
  needs: '/api/needs',
  sources: '/api/sources',
  publications: '/api/publications',
  audit: '/api/audit',
  approvers: '/api/approvers',
  approvals: '/api/approvals',
  drift: '/api/drift',
  driftGroups: '/api/drift/groups',
  driftAck: '/api/drift/:episodeId/ack',
  waivers: '/api/waivers',
  waiver: '/api/waivers/:waiverId',
} as const;

/** The `:name` parameters of a path template. */
export type PathParams<P extends string> = P extends `${string}:${infer N}/${infer Rest}`
  ? N | PathParams<`/${Rest}`>
  : P extends `${string}:${infer N}`
    ? N
    : never;

/** `path` with each `:name` replaced by its value, percent-encoded (a ref's slash becomes `%2F`). */
export function fillPath<P extends string>(path: P, params: Record<PathParams<P>, string>): string {
  return path.replace(/:(\w+)/g, (_, name: string) =>
    encodeURIComponent((params as Record<string, string>)[name] ?? ''),
  );
}
