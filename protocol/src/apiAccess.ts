import { z } from 'zod';
import { SiteIdSchema } from './ids.js';

/**
 * The hub's API for people and their rights (`/api/session`, `/api/audit`, `/api/approvers`,
 * `/api/approvals`): roles, sessions, the audit log and the approvals' journeys.
 */

/**
 * A person's role at the hub (S5 in docs/architecture.md#invariants). `viewer` reads; `operator` also asks for plans;
 * `publisher` also publishes files to outposts (publications); `approver` also approves applies; `admin` does everything.
 */
export const ROLES = ['viewer', 'operator', 'publisher', 'approver', 'admin'] as const;
export const RoleSchema = z.enum(ROLES);
export type Role = z.infer<typeof RoleSchema>;

/** How the current request was authenticated. `public` means no credential, under `api.public: true`. */
export const AuthViaSchema = z.enum(['token', 'session', 'sso', 'public']);
export type AuthVia = z.infer<typeof AuthViaSchema>;

/** `POST /api/session` body: sign in with an operator token. */
export const SessionCreateSchema = z.object({ token: z.string().min(1).max(512) });
export type SessionCreate = z.infer<typeof SessionCreateSchema>;

/**
 * `GET /api/session` (and `POST /api/session`) answer: who is signed in, with which roles, and the
 * CSRF value a cookie-authenticated write must send as header `X-Driftline-CSRF`.
 */
export const SessionSchema = z.object({
  user: z.string(),
  roles: z.array(RoleSchema),
  /** Send as `X-Driftline-CSRF` on POST/PUT/PATCH/DELETE made with the session cookie; empty when not cookie-based. */
  csrf: z.string(),
  via: AuthViaSchema,
});
export type Session = z.infer<typeof SessionSchema>;

export const AUDIT_ACTIONS = [
  'session.create',
  'session.delete',
  'auth.fail',
  'plan-request.create',
  'publication.publish',
  /** Written before decision 170 for what is now `publication.publish`; kept so older entries read. */
  'bundle.publish',
  'user.add',
  'user.revoke',
  'peer.add',
  'peer.revoke',
  'peer.rotate',
  'peer.sites',
  'agent.enroll',
  'agent.revoke',
  'approval.submit',
  /** `hub approver add|remove`: who holds which approver key, so a renamed key is traceable. */
  'approver.add',
  'approver.remove',
  /** `hub waiver add|remove`, `POST/DELETE /api/waivers` (decision 421). */
  'waiver.add',
  'waiver.remove',
  'drift.acknowledge',
] as const;
export const AuditActionSchema = z.enum(AUDIT_ACTIONS);
export type AuditAction = z.infer<typeof AuditActionSchema>;

/** One audit log entry: who did what to which target, how it ended, when and from where. */
export const AuditEntrySchema = z.object({
  id: z.number().int().nonnegative(),
  at: z.iso.datetime(),
  /** The user name, `cli` for hub CLI verbs, or `anonymous` when no user is known. */
  actor: z.string(),
  /** How the actor authenticated: `token`, `session`, `sso`, `public`, `cli` or `none`. */
  via: z.string(),
  action: AuditActionSchema,
  target: z.string(),
  outcome: z.enum(['ok', 'denied', 'failed']),
  detail: z.string().optional(),
  /** The TCP peer address of the request; empty for CLI actions. */
  address: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** `GET /api/audit?limit=&before=`: newest first; pass the last `id` as `before` for the next page. */
export const AuditResponseSchema = z.object({ entries: z.array(AuditEntrySchema) });
export type AuditResponse = z.infer<typeof AuditResponseSchema>;

/** `hub approver add`: a person and the public key they approve with, so the dashboard names them. */
export const ApproverSchema = z.object({
  name: z.string(),
  key: z.string(),
  addedAt: z.iso.datetime(),
});
export type Approver = z.infer<typeof ApproverSchema>;
export const ApproversResponseSchema = z.object({ approvers: z.array(ApproverSchema) });

/**
 * `GET /api/approvals`: each approval's journey with its times, ISO 8601: approved at headquarters →
 * submitted to the hub → taken by the site's relay → received by the agent → applying → applied,
 * apply-failed or refused (with the reason), and the cell's next plan.
 */
export const ApprovalJourneySchema = z.object({
  approvalId: z.string(),
  site: SiteIdSchema,
  environment: z.string(),
  component: z.string(),
  ref: z.string(),
  commit: z.string(),
  runId: z.string(),
  approver: z.string(),
  /** The approver's name from `hub approver add`, when the hub knows the key. */
  approverName: z.string().nullable(),
  approvedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  submittedAt: z.iso.datetime(),
  /**
   * When it arrived: for an agent that confirms what it receives, the time its own record says (decision
   * 300); for an older agent, when a relay (or the agent) pulled it from the hub's downlink.
   */
  deliveredAt: z.iso.datetime().nullable(),
  /** The agent's state for the approved run (absent until the agent reports). */
  state: z.enum([
    'submitted',
    'delivered',
    'waiting-quorum',
    'applying',
    'applied',
    'apply-failed',
    'refused',
  ]),
  reason: z.string().nullable(),
  receivedAt: z.iso.datetime().nullable(),
  startedAt: z.iso.datetime().nullable(),
  finishedAt: z.iso.datetime().nullable(),
  nextRunId: z.string().nullable(),
  /**
   * For an agent that confirms what it receives: when its word that the approval arrived is due (decision
   * 300). Absent for an older agent and from older hubs.
   */
  confirmBy: z.iso.datetime().optional(),
  /** Past `confirmBy` and the agent has not named it: the hub sends it again. */
  unconfirmed: z.boolean().optional(),
});
export type ApprovalJourney = z.infer<typeof ApprovalJourneySchema>;
export const ApprovalsResponseSchema = z.object({ approvals: z.array(ApprovalJourneySchema) });
export type ApprovalsResponse = z.infer<typeof ApprovalsResponseSchema>;
