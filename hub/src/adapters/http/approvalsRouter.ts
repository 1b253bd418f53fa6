import {
  ApprovalJourneySchema,
  ApprovalsResponseSchema,
  ApproversResponseSchema,
  MAX_APPROVAL_BYTES,
  RunIdSchema,
  SiteIdSchema,
  WireError,
} from '@driftline/protocol';
import Router from '@koa/router';
import { z } from 'zod';
import type { Approvals } from '../../core/Approvals.js';
import type { HubStore } from '../../ports/HubStore.js';
import type { Principal } from './auth.js';
import { readJson } from './json.js';
import { parseOr400 } from './parse.js';

/**
 * Largest `POST /api/approvals` body read: bigger than any approval, so that an oversized one is
 * answered with what is wrong (422) rather than only cut off (413 past this).
 */
export const MAX_APPROVAL_BODY_BYTES = 16 * 1024;

/** `GET /api/approvals` */
export const ApprovalsQuery = z.object({
  site: SiteIdSchema.describe('the site whose approvals to list'),
  runId: RunIdSchema.optional().describe('only approvals of this run'),
});

/** `GET /api/approvers`, `POST /api/approvals`, `GET /api/approvals`: approve at headquarters, apply at the site. */
export function approvalsRouter(d: { store: HubStore; approvals: Approvals }): Router {
  const r = new Router({ prefix: '/api' });
  r.get('/approvers', async (ctx) => {
    const rows = await d.store.listApprovers();
    ctx.body = ApproversResponseSchema.parse({
      approvers: rows.map((a) => ({ name: a.name, key: a.key, addedAt: new Date(a.addedAt).toISOString() })),
    });
  });
  r.get('/approvals', async (ctx) => {
    const q = parseOr400(ApprovalsQuery, ctx.query, 'query parameter');
    ctx.body = ApprovalsResponseSchema.parse({ approvals: await d.approvals.journeys(q.site, q.runId) });
  });
  r.post('/approvals', async (ctx) => {
    const body = await readJson(ctx, MAX_APPROVAL_BODY_BYTES, 'an approval');
    const size = Buffer.byteLength(JSON.stringify(body));
    if (size > MAX_APPROVAL_BYTES)
      throw new WireError(
        'unprocessable',
        `approval refused: oversized: ${size} bytes > ${MAX_APPROVAL_BYTES} (an approval is its claims, key and signature only)`,
      );
    const claims = (body as { claims?: { site?: unknown; runId?: unknown; approvalId?: unknown } } | null)
      ?.claims;
    ctx.state.auditTarget = `${String(claims?.site ?? '?').slice(0, 63)} run ${String(claims?.runId ?? '?').slice(0, 26)} approval ${String(claims?.approvalId ?? '?').slice(0, 26)}`;
    const user = (ctx.state.principal as Principal | null | undefined)?.user ?? 'anonymous';
    const result = await d.approvals.submit(body, user);
    if (!result.ok) throw new WireError(result.code, result.message);
    ctx.status = result.created ? 201 : 200;
    ctx.body = ApprovalJourneySchema.parse(result.journey);
  });
  return r;
}
