import { z } from 'zod';
import type { MatrixQuerySchema, SitesQuerySchema } from './api.js';
import { RunIdSchema, SiteIdSchema } from './ids.js';
import { PlanStatusSchema } from './planSummary.js';
import { CommitSchema, RefNameSchema } from './refs.js';

/**
 * Query parameters of the hub's `/api`, one zod schema per route. The hub parses with these and declares
 * them in `/api/openapi.json`; the dashboard builds its queries with the names they give
 * ({@link QueryParams}), so a parameter the hub does not read fails to compile there
 * (docs/decisions/280-one-place-per-decision.md).
 */

/** The parameters of a query as a client writes them: the schema's names, each as text or a number. */
export type QueryParams<S extends z.ZodObject> = { [K in keyof z.output<S>]?: string | number | null };

/** `GET /api/cells/{site}/{environment}/{component}/runs` */
export const RunsQuerySchema = z.object({
  before: z
    .string()
    .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/)
    .optional()
    .describe('a run id: older runs only (the previous page’s nextBefore)'),
  limit: z.coerce.number().int().min(1).max(500).default(100).describe('runs per page'),
  ref: RefNameSchema.optional().describe(
    "only runs of this ref (pr/42); default the runs of the component's default ref",
  ),
  status: PlanStatusSchema.optional().describe('only runs with this status (changes, failed, …)'),
});

/** `GET /api/audit` */
export const AuditQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100).describe('entries per page'),
  before: z.coerce.number().int().positive().optional().describe('an entry id: older entries only'),
});

/** `GET /api/plan-requests` and `GET /api/publications` */
export const SiteFilterQuerySchema = z.object({
  site: z.string().min(1).optional().describe('only this site'),
});

/** `GET /api/plan-requests`: at most `limit` requests, newest first (closed ones are kept for good). */
export const PlanRequestsQuerySchema = SiteFilterQuerySchema.extend({
  limit: z.coerce.number().int().min(1).max(500).default(100).describe('requests, newest first'),
});

/** `GET /api/events` */
export const EventsQuerySchema = z.object({
  lastEventId: z
    .string()
    .optional()
    .describe('for clients that cannot send the Last-Event-ID header: the last event id they saw'),
});

/** `GET /` */
export const SignInQuerySchema = z.object({
  token: z
    .string()
    .optional()
    .describe('an operator token: signs in (session cookie) and answers 303 to /, or to /?signin=failed'),
});

/** `GET /api/approvals` */
export const ApprovalsQuerySchema = z.object({
  site: SiteIdSchema.describe('the site whose approvals to list'),
  runId: RunIdSchema.optional().describe('only approvals of this run'),
});

/** Most sites one `GET /api/sources` names. */
export const MAX_SOURCE_SITES = 100;

/** `GET /api/refs` */
export const RefsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('refs, newest plan first'),
});

/** `GET /api/refs/{ref}/status` */
export const RefStatusQuerySchema = z.object({
  commit: CommitSchema.describe('the full commit id whose plans the gate waits for'),
});

/** `GET /api/needs` */
export const NeedsQuerySchema = z.object({
  site: z.string().min(1).max(200).optional().describe('only this site'),
});

/** `GET /api/sources` */
export const SourcesQuerySchema = z.object({
  site: z
    .string()
    .min(1)
    .max(MAX_SOURCE_SITES * 101)
    .optional()
    .describe(`site ids, comma-separated (at most ${MAX_SOURCE_SITES}); default every site`),
});

/** What the dashboard may send to each `/api` read: the names the hub parses, nothing else. */
export type MatrixQueryParams = QueryParams<typeof MatrixQuerySchema>;
export type SitesQueryParams = QueryParams<typeof SitesQuerySchema>;
export type RunsQueryParams = QueryParams<typeof RunsQuerySchema>;
export type AuditQueryParams = QueryParams<typeof AuditQuerySchema>;
export type SiteFilterQueryParams = QueryParams<typeof SiteFilterQuerySchema>;
export type PlanRequestsQueryParams = QueryParams<typeof PlanRequestsQuerySchema>;
export type ApprovalsQueryParams = QueryParams<typeof ApprovalsQuerySchema>;
