import { API_PATHS, PlanRequestCreateSchema, PlanRequestsQuerySchema, WireError } from '@driftline/protocol';
import { toPlanRequest } from '../../../core/views.js';
import { readJson } from '../json.js';
import { err } from '../openapiShared.js';
import { route } from './route.js';

/** Largest plan request body read, bytes. */
const MAX_PLAN_REQUEST_BYTES = 64 * 1024;

/** `/api/plan-requests`: ask a site's agent to plan a cell now, and follow the request. */
export const planRequestRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.planRequests,
    role: 'viewer',
    query: PlanRequestsQuerySchema,
    response: { status: 200, schema: 'PlanRequestsResponse', description: 'requests' },
    doc: { summary: 'Plan requests, newest first (at most `limit`)', others: { '400': err('bad query') } },
    handler: async (_ctx, d, { site, limit }) => {
      const rows = await d.store.listPlanRequests(site ? { site, limit } : { limit });
      const now = d.clock.now();
      return { requests: rows.map((r) => toPlanRequest(r, now)) };
    },
  }),
  route({
    method: 'GET',
    path: API_PATHS.planRequest,
    role: 'viewer',
    response: { status: 200, schema: 'PlanRequest', description: 'request' },
    doc: { summary: 'One plan request', others: { '404': err('no such request') } },
    handler: async (ctx, d) => {
      const row = await d.store.getPlanRequest(ctx.params.requestId ?? '');
      if (!row) throw new WireError('not-found', `no plan request '${ctx.params.requestId}'`);
      return toPlanRequest(row, d.clock.now());
    },
  }),
  route({
    method: 'POST',
    path: API_PATHS.planRequests,
    role: 'operator',
    audit: 'plan-request.create',
    body: { schema: 'PlanRequestCreate', maxBytes: MAX_PLAN_REQUEST_BYTES },
    response: { status: 201, schema: 'PlanRequest', description: 'created' },
    doc: {
      summary:
        "Ask a site's agent to plan one cell it already plans, optionally a ref (and commit) its ref patterns allow",
      others: {
        '400': err('bad query or body'),
        '404': err('not found'),
        '413': err('body over 64 KiB'),
        '422': err('cell not planned by that site, a bad ref or commit, or a ref it may not plan'),
      },
    },
    handler: async (ctx, d) => {
      const body = await readJson(ctx, MAX_PLAN_REQUEST_BYTES, 'a plan request body');
      const req = PlanRequestCreateSchema.safeParse(body);
      if (!req.success) {
        const i = req.error.issues[0];
        throw new WireError('bad-request', `field '${i?.path.join('.') || '?'}': ${i?.message}`);
      }
      ctx.state.auditTarget = `${req.data.site}/${req.data.environment}/${req.data.component}`;
      const result = await d.planRequests.create(req.data);
      if (!result.ok) throw new WireError(result.code, result.message);
      const out = toPlanRequest(result.request);
      ctx.state.auditTarget = `${ctx.state.auditTarget} ${out.requestId}`;
      d.onPlanRequest?.(out);
      return out;
    },
  }),
];
