import { ApprovalsQuery } from './approvalsRouter.js';
import { err, json, queryParams, ref } from './openapiShared.js';

const notModified = { '304': { description: 'not modified: the ETag sent in If-None-Match is current' } };

/** Paths for approving saved plans at headquarters, applied at the sites. */
export function approvalPaths(): Record<string, Record<string, object>> {
  return {
    '/api/approvers': {
      get: {
        summary:
          'People and the public keys they approve with (`hub approver add`), so the dashboard names them',
        responses: { '200': json('ApproversResponse', 'approvers by name'), ...notModified },
      },
    },
    '/api/approvals': {
      get: {
        summary:
          "A site's approvals, oldest first, each with its journey: submitted → delivered (pulled from the " +
          "hub's downlink) → the agent's record of the run (waiting-quorum, applying, applied, apply-failed, " +
          'refused with its reason) and the next plan',
        parameters: queryParams(ApprovalsQuery),
        responses: { '200': json('ApprovalsResponse', 'journeys'), ...notModified, '400': err('bad query') },
      },
      post: {
        summary:
          "Submit an approval signed with the approver's own Ed25519 key (signed where the key is: `hub approve` " +
          "or the dashboard). The hub checks the signature, the site, the run and its saved plan file's sha256, " +
          "then queues it on the site's downlink at control priority until it expires. The agent applies only " +
          'with a quorum of the approver keys its own config pins; the role alone cannot make a valid approval.',
        requestBody: { required: true, content: { 'application/json': { schema: ref('Approval') } } },
        responses: {
          '201': json('ApprovalJourney', 'queued'),
          '200': json('ApprovalJourney', 'the same approval was already queued: queued once'),
          '400': err('body is not JSON'),
          '409': err('the approval id is already used by another approval'),
          '413': err('body over 16 KiB'),
          '422': err(
            'malformed, oversized (over 4096 bytes), bad signature, expired, unknown site or run, or not the run’s environment, component, ref, commit or plan file',
          ),
        },
      },
    },
  };
}
