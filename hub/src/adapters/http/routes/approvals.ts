import { API_PATHS, ApprovalsQuerySchema, MAX_APPROVAL_BYTES, WireError } from '@driftline/protocol';
import { readJson } from '../json.js';
import { err, json } from '../openapiShared.js';
import type { Principal } from '../principal.js';
import { route, WithStatus } from './route.js';

/**
 * Largest `POST /api/approvals` body read: bigger than any approval, so that an oversized one is
 * answered with what is wrong (422) rather than only cut off (413 past this).
 */
export const MAX_APPROVAL_BODY_BYTES = 16 * 1024;

/** `/api/approvers`, `/api/approvals`: approve at headquarters, apply at the site. */
export const approvalRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.approvers,
    role: 'viewer',
    response: { status: 200, schema: 'ApproversResponse', description: 'approvers by name' },
    doc: {
      summary:
        'People and the public keys they approve with (`hub approver add`), so the dashboard names them',
    },
    handler: async (_ctx, d) => {
      const rows = await d.store.listApprovers();
      return {
        approvers: rows.map((a) => ({
          name: a.name,
          key: a.key,
          addedAt: new Date(a.addedAt).toISOString(),
        })),
      };
    },
  }),
  route({
    method: 'GET',
    path: API_PATHS.approvals,
    role: 'viewer',
    query: ApprovalsQuerySchema,
    response: { status: 200, schema: 'ApprovalsResponse', description: 'journeys' },
    doc: {
      summary:
        "A site's approvals, oldest first, each with its journey: submitted → delivered (pulled from the " +
        "hub's downlink) → the agent's record of the run (waiting-quorum, applying, applied, apply-failed, " +
        'refused with its reason) and the next plan',
      others: { '400': err('bad query') },
    },
    handler: async (_ctx, d, q) => ({ approvals: await d.approvals.journeys(q.site, q.runId) }),
  }),
  route({
    method: 'POST',
    path: API_PATHS.approvals,
    // The role only lets a person submit: the agent applies nothing without its pinned approvers' signatures.
    role: 'approver',
    audit: 'approval.submit',
    body: { schema: 'Approval', maxBytes: MAX_APPROVAL_BODY_BYTES },
    response: { status: 201, schema: 'ApprovalJourney', description: 'queued' },
    doc: {
      summary:
        "Submit an approval signed with the approver's own Ed25519 key (signed where the key is: `hub approve` " +
        "or the dashboard). The hub checks the signature, the site, the run and its saved plan file's sha256, " +
        'that no later plan superseded the run and that it is not applied, nor stale behind an apply, ' +
        "then queues it on the site's downlink at control priority until it expires. The agent applies only " +
        'with a quorum of the approver keys its own config pins; the role alone cannot make a valid approval.',
      others: {
        '200': json('ApprovalJourney', 'the same approval was already queued: queued once'),
        '400': err('body is not JSON'),
        '409': err('the approval id is already used by another approval'),
        '413': err('body over 16 KiB'),
        '422': err(
          'malformed, oversized (over 4096 bytes), bad signature, expired, unknown site or run, not the run’s environment, component, ref, commit or plan file, or a run superseded by a later plan, stale (its cell applied since) or already applied',
        ),
      },
    },
    handler: async (ctx, d) => {
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
      return result.created ? result.journey : new WithStatus(200, result.journey);
    },
  }),
];
